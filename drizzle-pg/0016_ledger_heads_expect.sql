-- A placement built on a head this process kept or has in flight (src/store/pg/ledger-heads.ts), in
-- one statement, for the wallets `ws` in the order given:
-- 1. takes a transaction-long advisory lock (class 2) on each new head it appends (`news`: the id of
--    its last entry per wallet), so that a transaction built on one of them waits for this one;
-- 2. waits for each transaction whose head it built on (`ids`; NULL: the wallet had no entry) to end:
--    while that entry is not committed, on its advisory lock when it is held, else (its transaction
--    has not reached this statement yet) polling, 1 ms at a time, for at most 100 ms;
-- 3. locks each wallet's row (FOR NO KEY UPDATE, held until the transaction ends), then, in a fresh
--    snapshot (READ COMMITTED: a VOLATILE function's statements each take one), checks that the
--    wallet's last entry is the one built on, and refuses otherwise (40001, the transaction run
--    again): the one it built on rolled back, or another instance appended.
CREATE FUNCTION ledger_heads_expect(ws text[], ids text[], news text[]) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  n integer := coalesce(array_length(ws, 1), 0);
  i integer;
  tries integer;
  head text;
BEGIN
  FOR i IN 1 .. n LOOP
    PERFORM pg_advisory_xact_lock(2, hashtext(news[i]));
  END LOOP;
  FOR i IN 1 .. n LOOP
    tries := 0;
    WHILE ids[i] IS NOT NULL AND tries < 100 AND NOT EXISTS (SELECT 1 FROM ledger_entries WHERE id = ids[i]) LOOP
      IF pg_try_advisory_lock_shared(2, hashtext(ids[i])) THEN
        PERFORM pg_advisory_unlock_shared(2, hashtext(ids[i]));
        PERFORM pg_sleep(0.001);
        tries := tries + 1;
      ELSE
        PERFORM pg_advisory_lock_shared(2, hashtext(ids[i]));
        PERFORM pg_advisory_unlock_shared(2, hashtext(ids[i]));
      END IF;
    END LOOP;
  END LOOP;
  FOR i IN 1 .. n LOOP
    PERFORM 1 FROM wallets WHERE id = ws[i] FOR NO KEY UPDATE;
  END LOOP;
  FOR i IN 1 .. n LOOP
    SELECT id INTO head FROM ledger_entries WHERE wallet_id = ws[i] ORDER BY seq DESC LIMIT 1;
    IF head IS DISTINCT FROM ids[i] THEN
      RAISE EXCEPTION 'the ledger head of wallet % is %, not % as this transaction expected', ws[i], coalesce(head, 'none'), coalesce(ids[i], 'none')
        USING ERRCODE = 'serialization_failure', DETAIL = 'ledger head (wallet_id)=(' || ws[i] || ') found (' || coalesce(head, '') || ')';
    END IF;
  END LOOP;
  RETURN 0;
END
$$;
