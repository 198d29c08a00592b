/** The next step for a refusal from the gateway, chosen from its code and details. */
import { AgentpayError } from 'agentpay-sdk/errors';
import { keyKindOf } from '../../domain/tenancy/api-keys.js';
import { DEFAULT_SCOPES } from '../../domain/tenancy/scopes.js';
import type { ReportContext } from './report.js';

type KeyKind = 'workspace' | 'provider' | 'operator';

/** How to use a key of that kind, for a hint. */
const useKey = (kind: KeyKind) => `--as ${kind} (a dev gateway's key, with --data-dir DIR or ./.agentpay) or --api-key ${kind.toUpperCase()}_KEY`;

/** The one kind of key that can hold a scope, or undefined when workspace and provider keys both can. */
function onlyKindFor(scope: string): KeyKind | undefined {
  const kinds = (['workspace', 'provider'] as const).filter((k) => (DEFAULT_SCOPES[k] as readonly string[]).includes(scope));
  if (kinds.length === 0) return 'operator';
  return kinds.length === 1 ? kinds[0] : undefined;
}

/** The kinds of key the gateway says an action takes (`details.keyKinds`), and whose own key (`details.ownerId`). */
function kindsRequired(e: AgentpayError): { kinds: KeyKind[]; ownerId?: string } | undefined {
  const kinds = Array.isArray(e.details.keyKinds) ? e.details.keyKinds.filter((k): k is KeyKind => k === 'workspace' || k === 'provider' || k === 'operator') : [];
  if (kinds.length === 0) return undefined;
  return { kinds, ...(typeof e.details.ownerId === 'string' ? { ownerId: e.details.ownerId } : {}) };
}

/** The next step for a 403: which key, or which scope, the action needs. */
function tryForForbidden(e: AgentpayError, ctx: ReportContext): string {
  const scope = typeof e.details.scope === 'string' ? e.details.scope : undefined;
  if (scope) {
    const only = onlyKindFor(scope);
    const caller = ctx.apiKey ? keyKindOf(ctx.apiKey) : undefined;
    // a key of a kind that may hold the scope was only made narrower; otherwise another kind of key is needed
    const kindMayHold = caller ? caller === 'operator' || only === undefined || only === caller : only !== 'provider' && only !== 'operator';
    // keys create: a new key gets only scopes its kind may hold and the calling key has
    const creating = e.details.reason === 'scope_not_grantable';
    if (creating || !kindMayHold) {
      return only && only !== caller
        ? `${scope} is held only by ${only} keys: ${creating ? `create this key with one: agentpay keys create --scopes ${scope} ` : 'use one that holds it: '}${useKey(only)}`
        : `use a key that holds ${scope} (agentpay keys list shows each key's scopes)`;
    }
    return `create a key with that scope: agentpay keys create --scopes ${scope}`;
  }
  const required = kindsRequired(e);
  const whoami = 'check which key you are using: agentpay whoami';
  if (required?.ownerId) return `use the ${required.kinds[0]}'s own key (${required.ownerId}): ${useKey(required.kinds[0]!)}; ${whoami}`;
  if (required?.kinds.length === 1) return `use a ${required.kinds[0]} key: ${useKey(required.kinds[0]!)}; ${whoami}`;
  if (required) return `use ${required.kinds.map((k) => `a ${k} key (${useKey(k)})`).join(' or ')}; ${whoami}`;
  return 'the record may belong to another tenant; check which key you are using: agentpay whoami';
}

/**
 * The next step for 501: a sandbox-only shortcut, or something no rail of this gateway does
 * (`details.reason: "no_rail_provider"`, with what was asked: `provides`, `asset`, `chain`, `rail`).
 */
function tryForNotSupported(e: AgentpayError): string {
  if (e.details.reason === 'no_rail_provider') {
    if (e.details.provides === 'topUps' && e.details.asset === 'USDC') {
      return 'USDC is not topped up but deposited: agentpay wallets deposit-address WALLET_ID (on a sandbox gateway, then agentpay sandbox deposit ADDRESS --amount USDC_BASE_UNITS); agentpay rail providers lists what each rail takes';
    }
    return "see what this gateway's rails take: agentpay rail providers";
  }
  return 'this gateway has no rail for that; development shortcuts work on a sandbox gateway: npx agentpay dev';
}

/** The next step for INSUFFICIENT_FUNDS: a payout asks for too much, a purchase needs money in. */
function tryForInsufficientFunds(e: AgentpayError, ctx: ReportContext): string {
  const walletId = typeof e.details.walletId === 'string' ? e.details.walletId : 'WALLET_ID';
  if (ctx.command === 'agentpay payouts create') {
    const available = typeof e.details.availableMinor === 'string' ? `the available ${e.details.availableMinor} minor units` : 'the available balance';
    return `pay out at most ${available} (see it with agentpay wallets balance ${walletId})`;
  }
  return `fund the wallet (sandbox): agentpay wallets fund ${walletId} --amount MINOR_UNITS`;
}

const RESET_PASSWORD = 'agentpay password forgot --email EMAIL, then agentpay password reset --token TOKEN';

/**
 * The next step for a refusal whose `details.reason` says more than its code: a wrong login, an
 * unusable reset token, a taken email, a payout without a destination.
 */
function tryForReason(e: AgentpayError): string | undefined {
  switch (e.details.reason) {
    case 'login_failed':
      return `check the email and password; a forgotten one is reset with: ${RESET_PASSWORD}`;
    case 'reset_token_unusable':
    case 'reset_token_expired':
      return `request a new token: ${RESET_PASSWORD}`;
    case 'email_taken':
      return `log in with agentpay login, or reset the password: ${RESET_PASSWORD}`;
    case 'no_payout_destination':
      return 'register one with a provider key: agentpay payouts destination set 0x… (USDC on Base) or ext_… (a bank account)';
    default:
      return undefined;
  }
}

/** The next step for a refusal from the gateway, by its code and details. */
export function tryForGateway(e: AgentpayError, ctx: ReportContext): string | undefined {
  const byReason = tryForReason(e);
  if (byReason) return byReason;
  switch (e.code) {
    case 'UNAUTHORIZED':
      return 'log in with a valid key: agentpay login (or pass --api-key)';
    case 'FORBIDDEN':
      return tryForForbidden(e, ctx);
    case 'WALLET_NOT_FOUND':
      return 'list the wallets this key can see: agentpay wallets list';
    case 'INSUFFICIENT_FUNDS':
      return tryForInsufficientFunds(e, ctx);
    case 'WALLET_FROZEN':
      return `unfreeze it: agentpay wallets unfreeze ${typeof e.details.walletId === 'string' ? e.details.walletId : 'WALLET_ID'}`;
    case 'CAPABILITY_NOT_FOUND':
      return 'find one with: agentpay search QUERY (your own: agentpay capabilities list)';
    case 'PROVIDER_NOT_FOUND':
      return 'list the providers this key can see: agentpay providers list';
    case 'POLICY_DENIED':
      return 'a workspace policy refuses it: see them with agentpay policies list, and dry-run a purchase with agentpay policies test';
    case 'APPROVAL_REQUIRED':
      return 'a person must approve it first: agentpay approvals (or approvals list, then approvals approve APPROVAL_ID); then retry once';
    case 'WALLET_PROVIDER_PAUSED':
      return 'after three seller errors in a row the seller is paused for this wallet; resume it: agentpay wallets resume-provider WALLET_ID --provider PROVIDER_ID';
    case 'CHALLENGE_EXPIRED':
    case 'REPLAY_DETECTED':
      return 'call the seller again for a new price quote';
    case 'IDEMPOTENCY_IN_PROGRESS':
      return 'the first call with this idempotency key is still running; retry in a moment with the same key to get its answer';
    case 'USAGE_ABOVE_MAXIMUM':
      return 'a metered call may use at most its capability\'s maxUnits (agentpay capabilities show CAP_ID); complete it with fewer units, or fail it';
    case 'IDEMPOTENCY_KEY_REUSED':
      return 'that idempotency key was used for another request; use a new key for a new request';
    case 'INVALID_CURSOR':
      return 'start from the first page (no --after), then pass the nextCursor each page prints';
    case 'NOT_SUPPORTED':
      return tryForNotSupported(e);
    case 'RATE_LIMITED':
      return 'wait a moment and retry';
    case 'SERVICE_UNAVAILABLE':
      return 'the gateway is shutting down or restarting; retry in a few seconds';
    case 'REQUEST_TIMEOUT':
      return 'the request reached the gateway too slowly; check the network and retry';
    case 'HEADERS_TOO_LARGE':
      return 'send fewer or shorter headers';
    case 'INSECURE_TRANSPORT':
      return 'use the https:// address of the gateway';
    case 'INTERNAL':
      return "the gateway failed; look for the errorId in the gateway's log";
    case 'HTTP_ERROR':
      return 'check that --gateway-url points at an agentpay gateway';
    default:
      return undefined;
  }
}
