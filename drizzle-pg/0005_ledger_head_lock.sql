-- A wallet's ledger head for a write transaction: locks the wallet's row (FOR NO KEY UPDATE, held
-- until the transaction ends), then reads its last entry. Two statements in one round trip: under
-- READ COMMITTED a VOLATILE function takes a fresh snapshot for each statement, so a movement that
-- waited here for another one on the same wallet reads the head that one appended
-- (src/store/pg/wallets.ts PgLedger.last, docs/deploy.md "Concurrency").
CREATE FUNCTION ledger_head_for_update(w text) RETURNS SETOF ledger_entries
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM 1 FROM wallets WHERE id = w FOR NO KEY UPDATE;
  RETURN QUERY SELECT * FROM ledger_entries WHERE wallet_id = w ORDER BY seq DESC LIMIT 1;
END
$$;
