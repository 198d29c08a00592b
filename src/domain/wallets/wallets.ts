/**
 * Wallets: buyer agent and workspace wallets, providers' settlement wallets, and
 * their ledgers. Ownership is by tenant: another tenant's wallet is "not found", so
 * its existence is not disclosed and nothing about it changes.
 */
import { AppError, forbidden, notFound, validationError, wrongKeyKind } from '../../core/errors.js';
import { assertStrongPublicKey, InvalidPublicKeyError } from '../../core/ed25519.js';
import { parseMinor } from '../../core/money.js';
import type { Repos } from '../../store/store.js';
import type { Wallet } from '../../store/repos/wallets.js';
import type { DomainContext } from '../platform/context.js';
import type { Principal } from '../tenancy/api-keys.js';
import { balanceOf, entryView, post } from './ledger.js';

/** A new wallet's row: active, not frozen, in USD, made now. */
export function newWalletRow(w: Pick<Wallet, 'id' | 'tenantId' | 'ownerType' | 'ownerId' | 'publicKeyPem'>, now: number): Wallet {
  return { ...w, status: 'active', frozen: false, frozenBy: null, currency: 'USD', createdAt: now, updatedAt: now };
}

export interface CreateWalletInput {
  ownerType: 'agent' | 'workspace';
  ownerId: string;
  publicKeyPem?: string;
}

export function walletView(w: Wallet) {
  return {
    id: w.id,
    ownerType: w.ownerType,
    ownerId: w.ownerId,
    publicKeyPem: w.publicKeyPem,
    status: w.status,
    frozen: w.frozen,
    currency: w.currency,
    createdAt: new Date(w.createdAt).toISOString(),
    updatedAt: new Date(w.updatedAt).toISOString(),
  };
}

export class WalletService {
  constructor(private ctx: DomainContext, private opts: { sandbox: boolean }) {}

  /** The wallet if the caller's tenant owns it (the operator sees every wallet). */
  async ownedWallet(r: Repos, p: Principal, walletId: string): Promise<Wallet> {
    const w = await r.wallets.get(walletId);
    if (!w || (w.tenantId !== p.tenantId && p.tenantKind !== 'operator')) throw notFound('WALLET_NOT_FOUND', 'wallet', walletId);
    return w;
  }

  async create(p: Principal, input: CreateWalletInput): Promise<Wallet> {
    if (p.tenantKind !== 'workspace') {
      throw wrongKeyKind(['workspace'], 'only a workspace key can create wallets; a provider is paid into its settlement wallet');
    }
    const ownerId = input.ownerId.trim();
    if (!ownerId) throw validationError('ownerId', 'must not be empty');
    let publicKeyPem: string | null = null;
    if (input.publicKeyPem !== undefined) {
      try {
        // stored as re-encoded from the parsed key, never as sent: nothing else the text held is kept
        publicKeyPem = assertStrongPublicKey(input.publicKeyPem).export({ type: 'spki', format: 'pem' }).toString();
      } catch (e) {
        if (e instanceof InvalidPublicKeyError) throw validationError('publicKeyPem', e.message);
        throw e;
      }
    } else if (input.ownerType === 'agent') {
      throw validationError('publicKeyPem', 'is required for agent wallets (the ed25519 public key that signs payment proofs)');
    }
    const now = this.ctx.clock.now();
    const wallet = newWalletRow({ id: this.ctx.ids.next('wallet'), tenantId: p.tenantId, ownerType: input.ownerType, ownerId, publicKeyPem }, now);
    await this.ctx.store.tx((r) => r.wallets.insert(wallet));
    return wallet;
  }

  list(p: Principal): Promise<Wallet[]> {
    return this.ctx.store.read((r) => r.wallets.listByTenant(p.tenantId));
  }

  get(p: Principal, walletId: string): Promise<Wallet> {
    return this.ctx.store.read((r) => this.ownedWallet(r, p, walletId));
  }

  async balance(p: Principal, walletId: string) {
    return this.ctx.store.read(async (r) => {
      const w = await this.ownedWallet(r, p, walletId);
      const b = await balanceOf(r, w.id);
      return { balanceMinor: b.balanceMinor.toString(), availableMinor: b.availableMinor.toString(), currency: w.currency };
    });
  }

  async ledger(p: Principal, walletId: string) {
    return this.ctx.store.read(async (r) => {
      const w = await this.ownedWallet(r, p, walletId);
      return (await r.ledger.list(w.id)).map(entryView);
    });
  }

  /**
   * Sandbox credit: instant money for development. `opts.sandbox` is simulatedCredits()
   * (src/domain/rails/service.ts): a sandbox gateway with no real payment provider
   * connected. Elsewhere 501, since a real rail could pay simulated money out.
   */
  async fund(p: Principal, walletId: string, body: { amountMinor: unknown; rail?: string }) {
    const amount = parseMinor(body.amountMinor, 'amountMinor');
    if (!this.opts.sandbox) {
      // ownership first: another tenant's wallet is 404 here as on every wallet route, not a 501 that says it exists
      await this.ctx.store.read((r) => this.ownedWallet(r, p, walletId));
      throw new AppError('NOT_SUPPORTED', 'funding by simulated credit works only on sandbox gateways without a real payment provider connected; use a top-up or a USDC deposit, whichever this gateway has a rail for (GET /v1/rail/providers lists them)');
    }
    return this.ctx.store.tx(async (r) => {
      const w = await this.ownedWallet(r, p, walletId);
      if (w.status !== 'active') throw new AppError('CONFLICT', `wallet ${w.id} is ${w.status}`);
      const entry = await post(r, this.ctx, {
        walletId: w.id,
        type: 'fund',
        amountMinor: amount,
        currency: w.currency,
        reference: body.rail ? `sandbox:${body.rail}` : 'sandbox',
        memo: 'sandbox credit',
      });
      const b = await balanceOf(r, w.id);
      return {
        entry: entryView(entry),
        balance: { balanceMinor: b.balanceMinor.toString(), availableMinor: b.availableMinor.toString(), currency: w.currency },
      };
    });
  }

  /**
   * Freezes or unfreezes, remembering who froze: a freeze by the operator (support, fraud) holds
   * until an operator lifts it, so the owner's unfreeze is 403; the owner's own freeze is the
   * owner's (and the operator's) to lift. An operator freezing a wallet its owner froze takes the
   * freeze over. A wallet frozen before `frozenBy` was recorded counts as frozen by its owner.
   */
  async setFrozen(p: Principal, walletId: string, frozen: boolean): Promise<Wallet> {
    return this.ctx.store.tx(async (r) => {
      const w = await this.ownedWallet(r, p, walletId);
      const by = p.tenantKind === 'operator' ? 'operator' : 'owner';
      if (!frozen && w.frozen && w.frozenBy === 'operator' && by !== 'operator') {
        throw forbidden(`wallet ${w.id} was frozen by the platform operator and only an operator can unfreeze it; contact the platform operator`, {
          walletId: w.id,
          frozenBy: 'operator',
          keyKinds: ['operator'],
        });
      }
      const frozenBy = !frozen ? null : w.frozen && w.frozenBy === 'operator' ? 'operator' : by;
      // already so: nothing is written, so the stored record (and its updatedAt) is the answer
      if (w.frozen === frozen && (w.frozenBy ?? 'owner') === (frozenBy ?? 'owner')) return w;
      const updatedAt = this.ctx.clock.now();
      await r.wallets.update(w.id, { frozen, frozenBy, updatedAt });
      return { ...w, frozen, frozenBy, updatedAt };
    });
  }
}
