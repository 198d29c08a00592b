import { randomBytes } from 'node:crypto';

/** Id prefixes of the specification, plus the ones agentpay adds for its own records. */
export const ID_PREFIX = {
  capability: 'cap',
  capabilityVersion: 'ver',
  provider: 'prv',
  workspace: 'wsp',
  operator: 'opr',
  wallet: 'wal',
  receipt: 'rcp',
  transaction: 'txn',
  policy: 'pol',
  approval: 'apr',
  externalRef: 'ext',
  signup: 'sgn',
  account: 'acc',
  apiKey: 'key',
  ledgerEntry: 'led',
  ledgerCheckpoint: 'lck',
  signingKey: 'sk',
  error: 'err',
  request: 'req',
  passwordReset: 'pwr',
  rating: 'rtg',
  verificationRequest: 'vrq',
  // rails (src/domain/rails): top-ups, deposits, payouts, destinations, events, reconciliations, sandbox references
  topup: 'top',
  deposit: 'dep',
  payout: 'pay',
  payoutDestination: 'dst',
  railEvent: 'evt',
  reconciliation: 'rec',
  sandboxRef: 'sbx',
  // webhooks (src/domain/platform/webhooks): endpoints and deliveries
  webhookEndpoint: 'whe',
  webhookDelivery: 'whd',
  alertMail: 'alm',
  // a gateway process, from its start to its end (GET /health's instanceId)
  instance: 'ins',
  // x402 exact authorizations (src/domain/payments/x402-exact.ts)
  x402Authorization: 'xau',
  // payment sessions (src/domain/payments/sessions)
  session: 'ses',
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export interface IdGenerator {
  next(kind: IdKind): string;
}

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const TIME_CHARS = 9; // milliseconds since 1970 in base36: 9 characters last until the year 5188
const RANDOM_CHARS = 11; // ~57 bits: two ids of one kind made in the same millisecond do not meet

// Random bytes drawn 4 KiB at a time: a paid call makes about six ids, and one call into the
// CSPRNG per id showed in the gateway's profile (randomFillSync, ~2 % of its CPU).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

/** The time in milliseconds, base36, fixed width: what makes ids and nonces sort by creation. */
function timePrefix(): string {
  return Date.now().toString(36).padStart(TIME_CHARS, '0');
}

/**
 * The prefix, then the time in milliseconds and random characters, 20 base36 characters in
 * all: ids made later sort later. That is for the database, not for meaning: a table's
 * primary key (and any index on an id column) then grows at its right edge, so a commit of
 * many inserts rewrites a few pages instead of one page per row scattered over the B-tree
 * (measured: a ledger insert with its indexes, 38 us of CPU with random ids, 15 with these;
 * docs/performance.md). Ids are not secrets (keys and tokens are made elsewhere), and they
 * tell no more than the `createdAt` next to them.
 */
export function randomId(kind: IdKind): string {
  if (taken + RANDOM_CHARS > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  let s = timePrefix();
  for (let i = taken; i < taken + RANDOM_CHARS; i++) s += ALPHABET[pool[i]! % 36];
  taken += RANDOM_CHARS;
  return `${ID_PREFIX[kind]}_${s}`;
}

export const randomIds: IdGenerator = { next: randomId };

/** Deterministic ids for tests: prv_000001, wal_000002, ... */
export class SequentialIds implements IdGenerator {
  private n = 0;
  next(kind: IdKind): string {
    this.n += 1;
    return `${ID_PREFIX[kind]}_${String(this.n).padStart(6, '0')}`;
  }
}

/**
 * A challenge nonce: the time as in ids (so the unique nonce index grows at its right edge),
 * then 24 random bytes in base64url. Unguessable and single-use; 41 characters.
 */
export function challengeNonce(): string {
  return timePrefix() + randomBytes(24).toString('base64url');
}
