CREATE TABLE `x402_authorizations` (
	`id` text PRIMARY KEY NOT NULL,
	`network` text NOT NULL,
	`asset` text NOT NULL,
	`nonce` text NOT NULL,
	`payer` text NOT NULL,
	`pay_to` text NOT NULL,
	`value` text NOT NULL,
	`valid_after` integer NOT NULL,
	`valid_before` integer NOT NULL,
	`signature` text NOT NULL,
	`capability_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`amount_minor` integer NOT NULL,
	`currency` text NOT NULL,
	`state` text NOT NULL,
	`tx_hash` text,
	`transaction_id` text,
	`attempts` integer NOT NULL,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`settled_at` integer
);--> statement-breakpoint
CREATE UNIQUE INDEX `x402_authorizations_nonce` ON `x402_authorizations` (`network`,`asset`,`nonce`);--> statement-breakpoint
CREATE INDEX `x402_authorizations_state` ON `x402_authorizations` (`state`,`updated_at`);