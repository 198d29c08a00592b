CREATE TABLE `alert_mails` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`state` text NOT NULL,
	`attempts` integer NOT NULL,
	`next_attempt_at` integer NOT NULL,
	`locked_until` integer,
	`last_error` text,
	`recipients` integer,
	`created_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `alert_mails_event` ON `alert_mails` (`event_id`);--> statement-breakpoint
CREATE INDEX `alert_mails_pending` ON `alert_mails` (`state`,`next_attempt_at`);