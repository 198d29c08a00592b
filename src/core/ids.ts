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
} as const;

export type IdKind = keyof typeof ID_PREFIX;

export interface IdGenerator {
  next(kind: IdKind): string;
}

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

// Random bytes drawn 4 KiB at a time: a paid call makes about six ids, and one call into the
// CSPRNG per id showed in the gateway's profile (randomFillSync, ~2 % of its CPU).
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

/** 16 random base36 characters (~82 bits); ids are not secrets, keys are made elsewhere. */
export function randomId(kind: IdKind): string {
  if (taken + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    taken = 0;
  }
  let s = '';
  for (let i = taken; i < taken + 16; i++) s += ALPHABET[pool[i]! % 36];
  taken += 16;
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
