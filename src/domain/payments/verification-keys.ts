/**
 * Parsed public keys for the authorization hot path. Platform keys never change for
 * an id; a wallet's registered key is fixed at creation, and the PEM is compared on
 * every hit anyway, so a cached key can never outlive the one on record.
 */
import type { KeyObject } from 'node:crypto';
import { parsePublicKeyPem } from '../../core/ed25519.js';
import type { Store } from '../../store/store.js';

/** Bounds memory when a gateway serves very many wallets: the cache simply starts over. */
const MAX_WALLET_KEYS = 10_000;

export class VerificationKeys {
  private platform = new Map<string, KeyObject>();
  private wallets = new Map<string, { pem: string; key: KeyObject }>();

  constructor(private store: Store) {}

  /** A platform signing key (current or retired) by id; undefined for an unknown id. */
  async platformKey(keyId: string): Promise<KeyObject | undefined> {
    const hit = this.platform.get(keyId);
    if (hit) return hit;
    const rec = await this.store.read((r) => r.signingKeys.get(keyId));
    if (!rec) return undefined; // unknown ids are not cached: anyone can make them up
    const key = parsePublicKeyPem(rec.publicKeyPem);
    this.platform.set(keyId, key);
    return key;
  }

  walletKey(walletId: string, pem: string): KeyObject {
    const hit = this.wallets.get(walletId);
    if (hit && hit.pem === pem) return hit.key;
    const key = parsePublicKeyPem(pem);
    if (this.wallets.size >= MAX_WALLET_KEYS) this.wallets.clear();
    this.wallets.set(walletId, { pem, key });
    return key;
  }
}
