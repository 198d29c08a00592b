CREATE TABLE "accounts" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"email" text NOT NULL,
	"password_hash" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"name" text NOT NULL,
	"key_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"scopes" text NOT NULL,
	"expires_at" bigint,
	"revoked_at" bigint,
	"last_used_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "password_resets" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"used_at" bigint,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signups" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"email" text NOT NULL,
	"website" text,
	"password_hash" text NOT NULL,
	"status" text NOT NULL,
	"token_hash" text NOT NULL,
	"token_expires_at" bigint NOT NULL,
	"resend_count" bigint NOT NULL,
	"tenant_id" text,
	"created_at" bigint NOT NULL,
	"verified_at" bigint
);
--> statement-breakpoint
CREATE TABLE "tenants" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"name" text NOT NULL,
	"email" text,
	"website" text,
	"status" text NOT NULL,
	"verified" boolean NOT NULL,
	"settlement_wallet_id" text,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"wallet_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"type" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"hold_minor" bigint NOT NULL,
	"balance_after" bigint NOT NULL,
	"held_after" bigint NOT NULL,
	"currency" text NOT NULL,
	"transaction_id" text,
	"reference" text,
	"memo" text,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "wallets" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"owner_type" text NOT NULL,
	"owner_id" text NOT NULL,
	"public_key_pem" text,
	"status" text NOT NULL,
	"frozen" boolean NOT NULL,
	"frozen_by" text,
	"currency" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"id" text PRIMARY KEY NOT NULL,
	"public_key_pem" text NOT NULL,
	"status" text NOT NULL,
	"created_at" bigint NOT NULL,
	"retired_at" bigint
);
--> statement-breakpoint
CREATE TABLE "capabilities" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"name" text NOT NULL,
	"description" text NOT NULL,
	"protocol" text NOT NULL,
	"price_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"category" text NOT NULL,
	"tags" text NOT NULL,
	"schema" text,
	"latency_p50_ms" double precision,
	"tool_name" text,
	"status" text NOT NULL,
	"current_version_id" text NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"deprecated_at" bigint
);
--> statement-breakpoint
CREATE TABLE "capability_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"capability_id" text NOT NULL,
	"version" text NOT NULL,
	"endpoint" text,
	"address" text NOT NULL,
	"schema" text,
	"hash" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ratings" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"transaction_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"agent_id" text,
	"rating" bigint NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "verification_requests" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"status" text NOT NULL,
	"note" text,
	"contact" text,
	"reason" text,
	"requested_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"decided_at" bigint
);
--> statement-breakpoint
CREATE TABLE "breakers" (
	"wallet_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"consecutive_failures" bigint NOT NULL,
	"paused" boolean NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "breakers_wallet_id_provider_id_pk" PRIMARY KEY("wallet_id","provider_id")
);
--> statement-breakpoint
CREATE TABLE "receipts" (
	"id" text PRIMARY KEY NOT NULL,
	"transaction_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"consumer_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"capability_id" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"response_hash" text,
	"status" text NOT NULL,
	"timestamp" bigint NOT NULL,
	"signature" text NOT NULL,
	"signing_key_id" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"nonce" text NOT NULL,
	"capability_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"fee_minor" bigint,
	"currency" text NOT NULL,
	"status" text NOT NULL,
	"failure_reason" text,
	"authorized_at" bigint NOT NULL,
	"expires_at" bigint NOT NULL,
	"resolved_at" bigint
);
--> statement-breakpoint
CREATE TABLE "approvals" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"agent_id" text NOT NULL,
	"capability_id" text NOT NULL,
	"amount_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"policy_id" text NOT NULL,
	"rule" text NOT NULL,
	"status" text NOT NULL,
	"created_at" bigint NOT NULL,
	"resolved_by" text,
	"resolved_at" bigint,
	"used_at" bigint,
	"used_by_transaction_id" text
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" text PRIMARY KEY NOT NULL,
	"workspace_id" text NOT NULL,
	"policy_type" text NOT NULL,
	"name" text,
	"enabled" boolean NOT NULL,
	"source" text NOT NULL,
	"rules" text NOT NULL,
	"ordinal" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "deposit_addresses" (
	"address" text PRIMARY KEY NOT NULL,
	"wallet_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"chain" text NOT NULL,
	"asset" text NOT NULL,
	"treasury_provider_id" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "payout_destinations" (
	"id" text PRIMARY KEY NOT NULL,
	"provider_id" text NOT NULL,
	"asset" text NOT NULL,
	"chain" text NOT NULL,
	"destination" text NOT NULL,
	"normalized" text NOT NULL,
	"created_at" bigint NOT NULL,
	"usable_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rail_events" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"type" text NOT NULL,
	"data" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rail_transactions" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"tenant_id" text NOT NULL,
	"wallet_id" text NOT NULL,
	"treasury_provider_id" text NOT NULL,
	"rail" text,
	"state" text NOT NULL,
	"rail_amount_minor" bigint NOT NULL,
	"rail_currency" text NOT NULL,
	"usd_amount_minor" bigint,
	"external_ref" text,
	"counterparty" text,
	"price_micros" bigint,
	"reason" text,
	"idempotency_key" text,
	"request_hash" text,
	"hosted_url" text,
	"expected_by" bigint,
	"resubmitted_at" bigint,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"settled_at" bigint
);
--> statement-breakpoint
CREATE TABLE "reconciliations" (
	"id" text PRIMARY KEY NOT NULL,
	"status" text NOT NULL,
	"obligations_minor" bigint NOT NULL,
	"holdings_minor" bigint NOT NULL,
	"report" text NOT NULL,
	"created_at" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sandbox_objects" (
	"kind" text NOT NULL,
	"id" text NOT NULL,
	"seq" bigint NOT NULL,
	"data" text NOT NULL,
	"updated_at" bigint NOT NULL,
	CONSTRAINT "sandbox_objects_kind_id_pk" PRIMARY KEY("kind","id")
);
--> statement-breakpoint
ALTER TABLE "accounts" ADD CONSTRAINT "accounts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "password_resets" ADD CONSTRAINT "password_resets_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_wallet_id_wallets_id_fk" FOREIGN KEY ("wallet_id") REFERENCES "public"."wallets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "capability_versions" ADD CONSTRAINT "capability_versions_capability_id_capabilities_id_fk" FOREIGN KEY ("capability_id") REFERENCES "public"."capabilities"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "accounts_email" ON "accounts" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_tenant" ON "api_keys" USING btree ("tenant_id");--> statement-breakpoint
CREATE UNIQUE INDEX "password_resets_token" ON "password_resets" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "signups_email" ON "signups" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_wallet_seq" ON "ledger_entries" USING btree ("wallet_id","seq");--> statement-breakpoint
CREATE INDEX "ledger_transaction" ON "ledger_entries" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "ledger_holds" ON "ledger_entries" USING btree ("wallet_id","created_at") WHERE type = 'hold';--> statement-breakpoint
CREATE INDEX "wallets_tenant" ON "wallets" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "capabilities_provider" ON "capabilities" USING btree ("provider_id");--> statement-breakpoint
CREATE INDEX "capabilities_status" ON "capabilities" USING btree ("status");--> statement-breakpoint
CREATE INDEX "capability_versions_capability" ON "capability_versions" USING btree ("capability_id");--> statement-breakpoint
CREATE UNIQUE INDEX "ratings_transaction" ON "ratings" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "ratings_provider" ON "ratings" USING btree ("provider_id");--> statement-breakpoint
CREATE INDEX "verification_requests_provider" ON "verification_requests" USING btree ("provider_id");--> statement-breakpoint
CREATE INDEX "receipts_transaction" ON "receipts" USING btree ("transaction_id");--> statement-breakpoint
CREATE INDEX "receipts_workspace" ON "receipts" USING btree ("workspace_id","timestamp");--> statement-breakpoint
CREATE INDEX "receipts_provider" ON "receipts" USING btree ("provider_id","timestamp");--> statement-breakpoint
CREATE UNIQUE INDEX "transactions_nonce" ON "transactions" USING btree ("nonce");--> statement-breakpoint
CREATE INDEX "transactions_open" ON "transactions" USING btree ("status","expires_at");--> statement-breakpoint
CREATE INDEX "approvals_workspace" ON "approvals" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "approvals_purchase" ON "approvals" USING btree ("wallet_id","capability_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_used_by" ON "approvals" USING btree ("used_by_transaction_id") WHERE used_by_transaction_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX "policies_workspace" ON "policies" USING btree ("workspace_id","created_at","ordinal");--> statement-breakpoint
CREATE UNIQUE INDEX "deposit_addresses_wallet" ON "deposit_addresses" USING btree ("wallet_id","chain","asset","treasury_provider_id");--> statement-breakpoint
CREATE INDEX "payout_destinations_provider" ON "payout_destinations" USING btree ("provider_id","asset","chain","created_at");--> statement-breakpoint
CREATE INDEX "rail_events_tenant" ON "rail_events" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "rail_tx_external_ref" ON "rail_transactions" USING btree ("treasury_provider_id","external_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "rail_tx_idempotency" ON "rail_transactions" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
CREATE INDEX "rail_tx_tenant" ON "rail_transactions" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "rail_tx_state" ON "rail_transactions" USING btree ("kind","state");--> statement-breakpoint
CREATE INDEX "sandbox_objects_seq" ON "sandbox_objects" USING btree ("kind","seq");