CREATE TABLE `payment_idempotency` (
	`wallet_id` text NOT NULL,
	`capability_id` text NOT NULL,
	`key` text NOT NULL,
	`request_hash` text NOT NULL,
	`transaction_id` text NOT NULL,
	`state` text NOT NULL,
	`response_status` integer,
	`response_content_type` text,
	`response_body` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	PRIMARY KEY(`wallet_id`, `capability_id`, `key`)
);
--> statement-breakpoint
CREATE UNIQUE INDEX `payment_idempotency_transaction` ON `payment_idempotency` (`transaction_id`);--> statement-breakpoint
CREATE INDEX `payment_idempotency_expiry` ON `payment_idempotency` (`expires_at`);