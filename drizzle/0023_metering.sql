ALTER TABLE `capabilities` ADD `metering` text;--> statement-breakpoint
ALTER TABLE `receipts` ADD `usage` text;--> statement-breakpoint
ALTER TABLE `transactions` ADD `charged_minor` integer;--> statement-breakpoint
ALTER TABLE `transactions` ADD `metering` text;