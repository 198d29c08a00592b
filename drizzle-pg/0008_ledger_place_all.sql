-- Several movements placed in one statement (src/store/pg/wallets.ts PgLedger.placeAll): each as
-- ledger_place (0006, 0007) places it, in the order given, so their wallets are locked in that order;
-- the first refusal fails the statement and the transaction with it. A completion places its
-- capture, sale and fee with one statement instead of three.
CREATE FUNCTION ledger_place_all(
  p_ids text[], p_wallets text[], p_types text[], p_amounts bigint[], p_holds bigint[], p_currencies text[],
  p_transactions text[], p_references text[], p_memos text[], p_ats bigint[]
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  FOR i IN 1 .. coalesce(array_length(p_ids, 1), 0) LOOP
    PERFORM ledger_place(p_ids[i], p_wallets[i], p_types[i], p_amounts[i], p_holds[i], p_currencies[i],
      p_transactions[i], p_references[i], p_memos[i], p_ats[i]);
  END LOOP;
END
$$;
