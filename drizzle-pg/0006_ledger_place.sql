-- A movement the database places after a wallet's last entry itself (src/store/pg/wallets.ts
-- PgLedger.place): the wallet locked and its head read as ledger_head_for_update does (0005),
-- the running sums extended, the entry appended; all in one statement, so a wallet that every sale
-- moves (a seller's, the platform's) is held for this statement and the commit alone, never for a
-- round trip through the gateway. Refused (check_violation, the transaction fails) when it would
-- leave the balance, the held amount or the available amount negative: the rule of the domain's
-- post() (src/domain/wallets/ledger.ts), kept here so that a caller's bug cannot overdraw a wallet.
CREATE FUNCTION ledger_place(
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
      USING ERRCODE = 'check_violation';
  END IF;
  INSERT INTO ledger_entries (id, wallet_id, seq, type, amount_minor, hold_minor, balance_after, held_after, currency, transaction_id, reference, memo, created_at)
  VALUES (p_id, p_wallet, coalesce(head.seq, 0) + 1, p_type, p_amount, p_hold, balance, held, p_currency, p_transaction, p_reference, p_memo, p_at);
END
$$;
