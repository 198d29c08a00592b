/**
 * `payouts create` when no answer says what happened: the request may have reached the
 * gateway and paid out. The idempotency key it was sent with makes a retry safe (the same
 * key and request answer the first payout, never a second one), so the error names it.
 */
import { AgentpayError } from '../sdk/errors.js';
import { CliError, describeError } from './errors.js';

/** Refusals that say for sure what happened: nothing was paid out (a closing gateway runs nothing), or it failed and was re-credited. */
const KNOWN_OUTCOME = new Set(['TREASURY_UNAVAILABLE', 'COVERAGE_SHORTFALL', 'NOT_SUPPORTED', 'SERVICE_UNAVAILABLE']);

/** True unless the gateway answered with a refusal: no answer (network), or a 5xx that is not one. */
export function outcomeUnknown(e: unknown): boolean {
  if (!(e instanceof AgentpayError) || e.status === undefined) return true;
  return e.status >= 500 && !KNOWN_OUTCOME.has(e.code);
}

/**
 * The error of a payout whose outcome is unknown: the original report, saying that the
 * payout may have been made, and the command that retries it safely with the same key.
 */
export function payoutMaybeMade(e: unknown, baseUrl: string, retry: { flags: string[]; idempotencyKey: string }): CliError {
  const r = describeError(e, { baseUrl });
  const again = ['agentpay payouts create', ...retry.flags, '--idempotency-key', retry.idempotencyKey].join(' ');
  const key = `--idempotency-key ${retry.idempotencyKey}`;
  return new CliError(r.code, `${r.message}; the payout may have been made: retry with ${key}, which never pays twice, or check agentpay payouts list`, {
    exit: r.exit,
    tryNext: `retry with the same key, which never pays twice: ${again}; or check whether it was made: agentpay payouts list`,
    details: { ...r.details, idempotencyKey: retry.idempotencyKey },
  });
}
