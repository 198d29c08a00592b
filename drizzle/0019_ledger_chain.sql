CREATE TABLE `ledger_checkpoints` (
	`id` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL,
	`heads` text NOT NULL,
	`signature` text NOT NULL,
	`signing_key_id` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `ledger_checkpoints_time` ON `ledger_checkpoints` (`created_at`);--> statement-breakpoint
ALTER TABLE `ledger_entries` ADD `hash` text;--> statement-breakpoint
ALTER TABLE `receipts` ADD `ledger_heads` text;--> statement-breakpoint
-- The one update the ledger allows: an entry written before the hash chain existed gets its hash,
-- once, at the store's first start (src/store/ledger-chain.ts sealLedger); every other column
-- stays as it was. Anything else is refused as before (0001).
DROP TRIGGER `ledger_entries_no_update`;--> statement-breakpoint
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
WHEN OLD.hash IS NOT NULL OR NEW.hash IS NULL OR NEW.id IS NOT OLD.id OR NEW.wallet_id IS NOT OLD.wallet_id
  OR NEW.seq IS NOT OLD.seq OR NEW.type IS NOT OLD.type OR NEW.amount_minor IS NOT OLD.amount_minor
  OR NEW.hold_minor IS NOT OLD.hold_minor OR NEW.balance_after IS NOT OLD.balance_after OR NEW.held_after IS NOT OLD.held_after
  OR NEW.currency IS NOT OLD.currency OR NEW.transaction_id IS NOT OLD.transaction_id OR NEW.reference IS NOT OLD.reference
  OR NEW.memo IS NOT OLD.memo OR NEW.created_at IS NOT OLD.created_at
BEGIN
  SELECT RAISE(ABORT, 'ledger_entries is append-only: UPDATE refused');
END;--> statement-breakpoint
-- Signed checkpoints are kept as written.
CREATE TRIGGER ledger_checkpoints_no_update BEFORE UPDATE ON ledger_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'ledger_checkpoints is append-only: UPDATE refused');
END;--> statement-breakpoint
CREATE TRIGGER ledger_checkpoints_no_delete BEFORE DELETE ON ledger_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'ledger_checkpoints is append-only: DELETE refused');
END;
