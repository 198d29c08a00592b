ALTER TABLE "x402_authorizations" ADD COLUMN "response_hash" text;--> statement-breakpoint
ALTER TABLE "x402_authorizations" ADD COLUMN "reconciled_at" bigint;