CREATE TABLE "session_claims" (
	"session_id" text NOT NULL,
	"cumulative_minor" bigint NOT NULL,
	"sequence" bigint NOT NULL,
	"amount_minor" bigint NOT NULL,
	"fee_minor" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	CONSTRAINT "session_claims_session_id_cumulative_minor_pk" PRIMARY KEY("session_id","cumulative_minor")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text PRIMARY KEY NOT NULL,
	"wallet_id" text NOT NULL,
	"workspace_id" text NOT NULL,
	"provider_id" text NOT NULL,
	"capability_id" text,
	"pay_to" text NOT NULL,
	"cap_minor" bigint NOT NULL,
	"claimed_minor" bigint NOT NULL,
	"fee_minor" bigint NOT NULL,
	"currency" text NOT NULL,
	"last_sequence" bigint NOT NULL,
	"session_public_key" text NOT NULL,
	"seller_public_key" text NOT NULL,
	"open_nonce" text NOT NULL,
	"status" text NOT NULL,
	"expires_at" bigint NOT NULL,
	"claim_window_ends_at" bigint NOT NULL,
	"created_at" bigint NOT NULL,
	"updated_at" bigint NOT NULL,
	"closed_at" bigint
);
--> statement-breakpoint
CREATE UNIQUE INDEX "sessions_open_nonce" ON "sessions" USING btree ("open_nonce");--> statement-breakpoint
CREATE INDEX "sessions_provider" ON "sessions" USING btree ("provider_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_workspace" ON "sessions" USING btree ("workspace_id","created_at");--> statement-breakpoint
CREATE INDEX "sessions_due" ON "sessions" USING btree ("status","claim_window_ends_at");