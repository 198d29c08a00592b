ALTER TABLE `x402_authorizations` ADD `response_hash` text;--> statement-breakpoint
ALTER TABLE `x402_authorizations` ADD `reconciled_at` integer;