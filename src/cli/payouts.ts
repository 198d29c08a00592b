/**
 * The payout commands' own work (`payouts list` and `payouts resolve`, at the end), and `payouts create` when
 * no answer says what happened: the request may have reached the
 * gateway and paid out. The idempotency key it was sent with makes a retry safe (the same
 * key and request answer the first payout, never a second one), so the error names it.
 */
import type { AgentpayClient, Payout, PayoutListOptions } from 'agentpay-sdk/client';
import { PAYOUT_STUCK_AFTER_MS, RESOLVE_OUTCOMES, type PayoutStatus, type ResolveOutcome } from 'agentpay-sdk/contract';
import { AgentpayError } from 'agentpay-sdk/errors';
import { CliError, describeError, usageError } from './errors/index.js';
import { moneyText, renderTable } from './output.js';
import { askChoice, askText } from './prompts.js';

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

/** `payouts list --status` and `payouts resolve --outcome`: the contract's values. */
export { PAYOUT_STATUSES, RESOLVE_OUTCOMES, type ResolveOutcome } from 'agentpay-sdk/contract';

/** What `payouts list` asks for; `stuck` is `status: submitted` before PAYOUT_STUCK_AFTER_MS (a day) ago. */
export interface PayoutListFlags {
  limit?: number | undefined;
  after?: string | undefined;
  status?: PayoutStatus | undefined;
  submittedBefore?: string | undefined;
  stuck?: boolean | undefined;
}

/**
 * `payouts list`: a provider key's own payouts, or the operator key's view of every provider's.
 * A workspace key is refused like by the other payout commands. `stuck` is measured on the
 * gateway's clock (its /health time), the clock the payouts' times come from, not this machine's.
 */
export async function listPayoutsForKey(client: AgentpayClient, flags: PayoutListFlags): Promise<{ page: { payouts: Payout[]; nextCursor?: string }; everyProvider: boolean; query: PayoutListOptions }> {
  const me = await client.auth.whoami();
  if (me.tenant.kind === 'workspace') {
    throw usageError("this key belongs to a workspace; payouts are a provider's", "use a provider key for its payouts (--as provider, or --api-key PROVIDER_KEY), or the operator key for every provider's (--as operator)");
  }
  const query: PayoutListOptions = {
    ...(flags.limit ? { limit: flags.limit } : {}),
    ...(flags.after ? { after: flags.after } : {}),
    ...(flags.status ? { status: flags.status } : {}),
    ...(flags.submittedBefore ? { submittedBefore: flags.submittedBefore } : {}),
  };
  if (flags.stuck) {
    const { time } = await client.platform.health();
    query.status = 'submitted';
    query.submittedBefore = new Date(Date.parse(time) - PAYOUT_STUCK_AFTER_MS).toISOString();
  }
  return { page: await client.payouts.list(query), everyProvider: me.tenant.kind === 'operator', query };
}

/** The operator's view of payouts: whose, which, how much, and since when. */
export function payoutTableEveryProvider(ps: readonly Payout[], empty = '(no payouts)'): string {
  return renderTable(ps, [
    { header: 'PROVIDER', get: (p) => p.providerId },
    { header: 'ID', get: (p) => p.id },
    { header: 'AMOUNT', get: (p) => moneyText(p.amountMinor, 'USD') },
    { header: 'STATUS', get: (p) => p.status },
    { header: 'SUBMITTED', get: (p) => p.createdAt },
    { header: 'RAIL', get: (p) => p.rail },
  ], empty);
}


/**
 * `payouts resolve ID` (operator key): closes out a `submitted` payout its rail never resolved.
 * The outcome and reason are asked on a terminal; a refusal keeps the gateway's code and
 * message and gets the next step that fits it.
 */
export async function resolvePayout(client: AgentpayClient, id: string, input: { outcome?: ResolveOutcome | undefined; reason?: string | undefined }): Promise<Payout> {
  const outcome = await askChoice({ flag: '--outcome', message: `What did the rail say about ${id}? paid: the money left; failed: it did not`, value: input.outcome, choices: RESOLVE_OUTCOMES });
  const reason = await askText({ flag: '--reason', message: 'Reason (what the rail told you: who, when, its reference)', value: input.reason });
  try {
    return await client.payouts.resolve(id, { outcome, reason });
  } catch (e) {
    const tryNext = resolveRefusalNext(e, id, outcome);
    if (tryNext === undefined) throw e;
    const r = describeError(e, { baseUrl: client.http.gatewayUrl });
    throw new CliError(r.code, r.message, { exit: r.exit, tryNext, details: r.details });
  }
}

function resolveRefusalNext(e: unknown, id: string, outcome: ResolveOutcome): string | undefined {
  if (!(e instanceof AgentpayError)) return undefined;
  const again = (o: ResolveOutcome) => `agentpay payouts resolve ${id} --outcome ${o} --reason "..." --as operator`;
  if (e.code === 'RAIL_DISAGREES') {
    return outcome === 'failed'
      ? `the rail sent the money: ${again('paid')}; or have the rail correct its record first`
      : `the money came back: ${again('failed')}, or let the rail job re-credit it`;
  }
  if (e.code === 'NOT_FOUND') return 'find the payouts still submitted, with their ids: agentpay payouts list --status submitted --as operator';
  if (e.code === 'CONFLICT') {
    return e.details.status === 'submitted' ? `retry in a moment: ${again(outcome)}` : 'nothing to resolve: the payout has settled as the message says, and a resolution is final';
  }
  return undefined;
}
