CREATE TABLE "auth_throttles" (
	"key" text PRIMARY KEY NOT NULL,
	"count" bigint NOT NULL,
	"window_started_at" bigint NOT NULL,
	"last_at" bigint NOT NULL,
	"blocked_until" bigint,
	"expires_at" bigint NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "parent_key_id" text;--> statement-breakpoint
ALTER TABLE "api_keys" ADD COLUMN "login_account_id" text;--> statement-breakpoint
CREATE INDEX "auth_throttles_expires" ON "auth_throttles" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "api_keys_parent" ON "api_keys" USING btree ("parent_key_id");--> statement-breakpoint
CREATE INDEX "api_keys_login_account" ON "api_keys" USING btree ("login_account_id");--> statement-breakpoint
-- Keys issued by a login before this migration: named "login <ISO time>" and living exactly 30 days
-- (src/domain/tenancy/accounts.ts); marked with their tenant's first account, so a password reset revokes them.
UPDATE "api_keys" SET "login_account_id" = (
	SELECT "a"."id" FROM "accounts" "a" WHERE "a"."tenant_id" = "api_keys"."tenant_id" ORDER BY "a"."created_at", "a"."id" LIMIT 1
) WHERE "name" LIKE 'login %' AND "expires_at" - "created_at" = 2592000000 AND "login_account_id" IS NULL;
