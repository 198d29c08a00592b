CREATE TABLE `session_claims` (
	`session_id` text NOT NULL,
	`cumulative_minor` integer NOT NULL,
	`sequence` integer NOT NULL,
	`amount_minor` integer NOT NULL,
	`fee_minor` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`session_id`, `cumulative_minor`)
);
--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`wallet_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`capability_id` text,
	`pay_to` text NOT NULL,
	`cap_minor` integer NOT NULL,
	`claimed_minor` integer NOT NULL,
	`fee_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`last_sequence` integer NOT NULL,
	`session_public_key` text NOT NULL,
	`seller_public_key` text NOT NULL,
	`open_nonce` text NOT NULL,
	`status` text NOT NULL,
	`expires_at` integer NOT NULL,
	`claim_window_ends_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`closed_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `sessions_open_nonce` ON `sessions` (`open_nonce`);--> statement-breakpoint
CREATE INDEX `sessions_provider` ON `sessions` (`provider_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `sessions_workspace` ON `sessions` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `sessions_due` ON `sessions` (`status`,`claim_window_ends_at`);