-- The ledger's rule has one owner, the store's TypeScript (src/store/ledger-chain.ts, docs/architecture.md
-- "Money"): the functions that placed a movement inside PostgreSQL (0006, 0007, 0008) are gone, and
-- what PostgreSQL still does for a placement is lock: ledger_heads_for_update locks several wallets'
-- rows (FOR NO KEY UPDATE, held until the transaction ends) in the order given, then reads each one's
-- last entry, in one statement (src/store/pg/wallets.ts PgLedger.place). Under READ COMMITTED a
-- VOLATILE function takes a fresh snapshot for each statement, so a placement that waited for a lock
-- reads the head the holder appended.
DROP FUNCTION IF EXISTS ledger_place_all(text[], text[], text[], bigint[], bigint[], text[], text[], text[], text[], bigint[]);
--> statement-breakpoint
DROP FUNCTION IF EXISTS ledger_place(text, text, text, bigint, bigint, text, text, text, text, bigint);
--> statement-breakpoint
CREATE FUNCTION ledger_heads_for_update(ws text[]) RETURNS SETOF ledger_entries
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  w text;
BEGIN
  FOREACH w IN ARRAY ws LOOP
    PERFORM 1 FROM wallets WHERE id = w FOR NO KEY UPDATE;
  END LOOP;
  FOREACH w IN ARRAY ws LOOP
    RETURN QUERY SELECT * FROM ledger_entries WHERE wallet_id = w ORDER BY seq DESC LIMIT 1;
  END LOOP;
END
$$;
