-- The two refusals a transaction placed in one write (PgStore.tx) must recognise, named.
-- transaction_resolve: an authorized transaction resolved by a conditional update of its row
-- (src/store/pg/payments.ts PgTransactions.resolve); when the row is no longer authorized
-- (another instance completed, failed or swept it first) it raises, so the database transaction
-- fails instead of committing the rest of the resolution: constraint transaction_authorized.
-- ledger_place (0006) again, unchanged but for its refusal's constraint name, ledger_sums.
-- src/store/errors.ts storeError turns each into its typed error.
CREATE FUNCTION transaction_resolve(
  p_id text, p_status text, p_fee bigint, p_reason text, p_at bigint
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE transactions SET status = p_status, fee_minor = coalesce(p_fee, fee_minor), failure_reason = coalesce(p_reason, failure_reason), resolved_at = p_at
  WHERE id = p_id AND status = 'authorized';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'transaction % is not authorized any more: it was resolved first elsewhere', p_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'transaction_authorized';
  END IF;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ledger_place(
  p_id text, p_wallet text, p_type text, p_amount bigint, p_hold bigint, p_currency text,
  p_transaction text, p_reference text, p_memo text, p_at bigint
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  head ledger_entries%ROWTYPE;
  balance bigint;
  held bigint;
BEGIN
  PERFORM 1 FROM wallets WHERE id = p_wallet FOR NO KEY UPDATE;
  SELECT * INTO head FROM ledger_entries WHERE wallet_id = p_wallet ORDER BY seq DESC LIMIT 1;
  balance := coalesce(head.balance_after, 0) + p_amount;
  held := coalesce(head.held_after, 0) + p_hold;
  IF balance < 0 OR held < 0 OR balance - held < 0 THEN
    RAISE EXCEPTION 'wallet % would be left with balance % and held %: refused', p_wallet, balance, held
      USING ERRCODE = 'check_violation', CONSTRAINT = 'ledger_sums';
  END IF;
  INSERT INTO ledger_entries (id, wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after, currency, transaction_id, reference, memo, created_at)
  VALUES (p_id, p_wallet, coalesce(head.seq, 0) + 1, p_type, p_amount, p_hold, balance, held, p_currency, p_transaction, p_reference, p_memo, p_at);
END
$$;
