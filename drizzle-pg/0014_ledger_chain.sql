CREATE TABLE "ledger_checkpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"created_at" bigint NOT NULL,
	"heads" text NOT NULL,
	"signature" text NOT NULL,
	"signing_key_id" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "hash" text;--> statement-breakpoint
ALTER TABLE "receipts" ADD COLUMN "ledger_heads" text;--> statement-breakpoint
CREATE INDEX "ledger_checkpoints_time" ON "ledger_checkpoints" USING btree ("created_at");--> statement-breakpoint
-- The one update the ledger allows: an entry written before the hash chain existed gets its hash,
-- once, at the store's first start (src/store/ledger-chain.ts sealLedger); every other column
-- stays as it was. Anything else is refused as before (0001).
CREATE OR REPLACE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.hash IS NULL AND NEW.hash IS NOT NULL AND (to_jsonb(NEW) - 'hash') = (to_jsonb(OLD) - 'hash') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
--> statement-breakpoint
-- Signed checkpoints are kept as written.
CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
--> statement-breakpoint
CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
