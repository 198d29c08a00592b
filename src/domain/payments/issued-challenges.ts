/**
 * The challenges this gateway process signed, by nonce, while they are valid. At authorize,
 * a presented challenge whose canonical form, signature and key id are exactly those signed
 * here needs no ed25519 verify (190 µs on this machine, a third of the gateway's signature
 * work per paid call; docs/performance.md). Anything else (another instance signed it, the
 * gateway restarted, the entry was evicted, a field was changed) takes the full verify, so
 * this only ever saves work: it never accepts what the verify would refuse.
 */
import { signingPayload } from 'agentpay-sdk/contract';
import type { Challenge } from './challenge.js';

interface Signed {
  payload: string;
  signature: string;
  signingKeyId: string;
  expiresAtMs: number;
}

export class IssuedChallenges {
  private readonly byNonce = new Map<string, Signed>();

  /** at most this many remembered; the oldest go first (a miss only costs a verify) */
  constructor(private readonly max = 100_000) {}

  remember(challenge: Challenge, now: number): void {
    this.prune(now);
    if (this.byNonce.size >= this.max) this.byNonce.delete(this.byNonce.keys().next().value!);
    this.byNonce.set(challenge.nonce, {
      payload: signingPayload(challenge),
      signature: challenge.signature,
      signingKeyId: challenge.signingKeyId,
      expiresAtMs: Date.parse(challenge.expiresAt),
    });
  }

  /** Whether exactly this challenge, every field, was signed here and is still remembered. */
  signedHere(challenge: Record<string, unknown>): boolean {
    const s = typeof challenge.nonce === 'string' ? this.byNonce.get(challenge.nonce) : undefined;
    if (!s || s.signature !== challenge.signature || s.signingKeyId !== challenge.signingKeyId) return false;
    try {
      return s.payload === signingPayload(challenge);
    } catch {
      return false;
    }
  }

  get size(): number {
    return this.byNonce.size;
  }

  /** Entries are in issue order and share one lifetime, so the expired ones are at the front. */
  private prune(now: number): void {
    for (const [nonce, s] of this.byNonce) {
      if (s.expiresAtMs > now) return;
      this.byNonce.delete(nonce);
    }
  }
}
