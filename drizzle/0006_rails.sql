CREATE TABLE `deposit_addresses` (
	`address` text PRIMARY KEY NOT NULL,
	`wallet_id` text NOT NULL,
	`tenant_id` text NOT NULL,
	`chain` text NOT NULL,
	`asset` text NOT NULL,
	`treasury_provider_id` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deposit_addresses_wallet` ON `deposit_addresses` (`wallet_id`,`chain`,`asset`,`treasury_provider_id`);--> statement-breakpoint
CREATE TABLE `payout_destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`provider_id` text NOT NULL,
	`asset` text NOT NULL,
	`chain` text NOT NULL,
	`destination` text NOT NULL,
	`normalized` text NOT NULL,
	`created_at` integer NOT NULL,
	`usable_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `payout_destinations_provider` ON `payout_destinations` (`provider_id`,`asset`,`chain`,`created_at`);--> statement-breakpoint
CREATE TABLE `rail_events` (
	`id` text PRIMARY KEY NOT NULL,
	`tenant_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `rail_events_tenant` ON `rail_events` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `rail_transactions` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`tenant_id` text NOT NULL,
	`wallet_id` text NOT NULL,
	`treasury_provider_id` text NOT NULL,
	`rail` text,
	`state` text NOT NULL,
	`rail_amount_minor` integer NOT NULL,
	`rail_currency` text NOT NULL,
	`usd_amount_minor` integer,
	`external_ref` text,
	`counterparty` text,
	`price_micros` integer,
	`reason` text,
	`idempotency_key` text,
	`request_hash` text,
	`hosted_url` text,
	`expected_by` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`settled_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `rail_tx_external_ref` ON `rail_transactions` (`treasury_provider_id`,`external_ref`);--> statement-breakpoint
CREATE UNIQUE INDEX `rail_tx_idempotency` ON `rail_transactions` (`tenant_id`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `rail_tx_tenant` ON `rail_transactions` (`tenant_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `rail_tx_state` ON `rail_transactions` (`kind`,`state`);--> statement-breakpoint
CREATE TABLE `reconciliations` (
	`id` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`obligations_minor` integer NOT NULL,
	`holdings_minor` integer NOT NULL,
	`report` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `sandbox_objects` (
	`kind` text NOT NULL,
	`id` text NOT NULL,
	`seq` integer NOT NULL,
	`data` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`kind`, `id`)
);
--> statement-breakpoint
CREATE INDEX `sandbox_objects_seq` ON `sandbox_objects` (`kind`,`seq`);