-- What the SQLite migrations enforce with triggers and virtual tables, in PostgreSQL's terms.

-- The ledger is append-only: corrections are new rows, never edits (SQLite: 0001, 0004).
-- INSERT ... ON CONFLICT DO UPDATE fires the UPDATE trigger too, so no insert can rewrite an
-- entry; the unique (wallet_id, seq) index of 0000 keeps a wallet's sequence free of duplicates.
CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger_entries is append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
--> statement-breakpoint
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
--> statement-breakpoint
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();
--> statement-breakpoint
-- A wallet's entry sequence has no gaps: entry n+1 follows entry n (the first is 1). Checked at
-- insert; together with the unique index, two writers can never both extend one running sum.
CREATE FUNCTION ledger_entries_next_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.seq <> 1 AND NOT EXISTS (SELECT 1 FROM ledger_entries WHERE wallet_id = NEW.wallet_id AND seq = NEW.seq - 1) THEN
    RAISE EXCEPTION 'ledger_entries: entry % of wallet % does not follow the wallet''s last entry', NEW.seq, NEW.wallet_id USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER ledger_entries_seq_no_gap BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entries_next_seq();
--> statement-breakpoint
-- Insertion order, where SQLite orders by its rowid (lists newest first, paging by id, policies
-- in apply order). Not in the drizzle schema: the rows' types stay the SQLite ones.
ALTER TABLE policies ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE approvals ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE verification_requests ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE rail_transactions ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE deposit_addresses ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE payout_destinations ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE rail_events ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
ALTER TABLE reconciliations ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY;
--> statement-breakpoint
CREATE UNIQUE INDEX rail_transactions_rowid ON rail_transactions (rowid);
--> statement-breakpoint
CREATE INDEX rail_tx_state_order ON rail_transactions (kind, state, rowid);
--> statement-breakpoint
CREATE INDEX rail_events_order ON rail_events (tenant_id, rowid);
--> statement-breakpoint
CREATE UNIQUE INDEX rail_events_rowid ON rail_events (rowid);
--> statement-breakpoint
CREATE INDEX policies_order ON policies (workspace_id, created_at, rowid);
--> statement-breakpoint
-- Full-text search for discovery (SQLite: the FTS5 table of 0003). Weights as SQLite's bm25
-- call: name A, tags and category B, description C.
CREATE TABLE capability_search (
  capability_id text PRIMARY KEY NOT NULL,
  doc tsvector NOT NULL
);
--> statement-breakpoint
CREATE INDEX capability_search_doc ON capability_search USING gin (doc);
