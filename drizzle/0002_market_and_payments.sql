CREATE TABLE `capabilities` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`protocol` text NOT NULL,
	`price_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`category` text NOT NULL,
	`tags` text NOT NULL,
	`schema` text,
	`latency_p50_ms` integer,
	`tool_name` text,
	`status` text NOT NULL,
	`current_version_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`deprecated_at` integer
);
--> statement-breakpoint
CREATE INDEX `capabilities_provider` ON `capabilities` (`provider_id`);--> statement-breakpoint
CREATE INDEX `capabilities_status` ON `capabilities` (`status`);--> statement-breakpoint
CREATE TABLE `capability_versions` (
	`id` text PRIMARY KEY NOT NULL,
	`capability_id` text NOT NULL,
	`version` text NOT NULL,
	`endpoint` text,
	`address` text NOT NULL,
	`schema` text,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`capability_id`) REFERENCES `capabilities`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `capability_versions_capability` ON `capability_versions` (`capability_id`);--> statement-breakpoint
CREATE TABLE `ratings` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`transaction_id` text NOT NULL,
	`wallet_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`agent_id` text,
	`rating` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `ratings_transaction` ON `ratings` (`transaction_id`);--> statement-breakpoint
CREATE INDEX `ratings_provider` ON `ratings` (`provider_id`);--> statement-breakpoint
CREATE TABLE `verification_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`status` text NOT NULL,
	`note` text,
	`contact` text,
	`reason` text,
	`requested_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`decided_at` integer
);
--> statement-breakpoint
CREATE INDEX `verification_requests_provider` ON `verification_requests` (`provider_id`);--> statement-breakpoint
CREATE TABLE `breakers` (
	`wallet_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`consecutive_failures` integer NOT NULL,
	`paused` integer NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`wallet_id`, `provider_id`)
);
--> statement-breakpoint
CREATE TABLE `receipts` (
	`id` text PRIMARY KEY NOT NULL,
	`transaction_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`consumer_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`capability_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`response_hash` text,
	`status` text NOT NULL,
	`timestamp` integer NOT NULL,
	`signature` text NOT NULL,
	`signing_key_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `receipts_transaction` ON `receipts` (`transaction_id`);--> statement-breakpoint
CREATE INDEX `receipts_workspace` ON `receipts` (`workspace_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `receipts_provider` ON `receipts` (`provider_id`,`timestamp`);--> statement-breakpoint
CREATE TABLE `transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`nonce` text NOT NULL,
	`capability_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`wallet_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`fee_minor` integer,
	`currency` text NOT NULL,
	`status` text NOT NULL,
	`failure_reason` text,
	`authorized_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`resolved_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `transactions_nonce` ON `transactions` (`nonce`);--> statement-breakpoint
CREATE INDEX `transactions_open` ON `transactions` (`status`,`expires_at`);--> statement-breakpoint
CREATE INDEX `transactions_wallet` ON `transactions` (`wallet_id`);