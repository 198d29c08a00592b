CREATE TABLE "x402_authorizations" (
	"id" text PRIMARY KEY NOT NULL,
	"network" text NOT NULL,
	"asset" text NOT NULL,
	"nonce" text NOT NULL,
	"payer" text NOT NULL,
	"pay_to" text NOT NULL,
	"value" text NOT NULL,
	"valid_after" bigint NOT NULL,
	"valid_before" bigint NOT NULL,
	"signature" text NOT NULL,
	"capability_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"state" text NOT NULL,
	"tx_hash" text,
	"transaction_id" text,
	"attempts" bigint NOT NULL,
	"last_error" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"settled_at" bigint
);--> statement-breakpoint
CREATE UNIQUE INDEX "x402_authorizations_nonce" ON "x402_authorizations" USING btree ("network","asset","nonce");--> statement-breakpoint
CREATE INDEX "x402_authorizations_state" ON "x402_authorizations" USING btree ("state","updated_at");