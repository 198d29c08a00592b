ALTER TABLE "capabilities" ADD COLUMN "metering" text;--> statement-breakpoint
ALTER TABLE "receipts" ADD COLUMN "usage" text;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "charged_minor" bigint;--> statement-breakpoint
ALTER TABLE "transactions" ADD COLUMN "metering" text;--> statement-breakpoint
-- transaction_resolve (0007) with a metered call's charged amount: the same conditional update,
-- which also records what was charged (src/store/sql/payments.ts Transactions.resolve).
CREATE FUNCTION transaction_resolve(
  p_id text, p_status text, p_fee bigint, p_reason text, p_at bigint, p_charged bigint
) RETURNS void
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  UPDATE transactions SET status = p_status, fee_minor = coalesce(p_fee, fee_minor), failure_reason = coalesce(p_reason, failure_reason),
    resolved_at = p_at, charged_minor = coalesce(p_charged, charged_minor)
  WHERE id = p_id AND status = 'authorized';
  IF NOT FOUND THEN
    RAISE EXCEPTION 'transaction % is not authorized any more: it was resolved first elsewhere', p_id
      USING ERRCODE = 'check_violation', CONSTRAINT = 'transaction_authorized';
  END IF;
END
$$;
