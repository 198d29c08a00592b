/**
 * What the USDC adapter remembers across restarts and across a fleet's instances: its deposit
 * addresses, how far the domain has ingested the chain's deposits, each payout's signed
 * transaction, and the treasury sender's lease. Kept in the gateway's store (the generic
 * object records of `Repos.sandboxObjects`, under `usdc:<adapter id>:<kind>` kinds), one
 * store transaction per read-modify-write, so two instances agree on who wrote first.
 */
import { RailUnavailable } from '../../domain/rails/adapters.js';
import type { Store } from '../../store/store.js';

export type Json = Record<string, unknown>;

export class AdapterState {
  private store: Store | undefined;

  constructor(private prefix: string, private now: () => number) {}

  attach(store: Store): void {
    this.store = store;
  }

  private get s(): Store {
    if (!this.store) throw new RailUnavailable('usdc', 'the USDC adapter is not attached to a gateway store yet');
    return this.store;
  }

  private kind(k: string) {
    return `${this.prefix}:${k}`;
  }

  async get<T extends Json>(kind: string, id: string): Promise<T | undefined> {
    return (await this.s.read((r) => r.sandboxObjects.get(this.kind(kind), id)))?.data as T | undefined;
  }

  async list<T extends Json>(kind: string): Promise<T[]> {
    return (await this.s.read((r) => r.sandboxObjects.list(this.kind(kind)))).map((o) => o.data as T);
  }

  /** One transaction over several records: `get` and `put` inside it. */
  async transaction<R>(f: (t: { get<T extends Json>(kind: string, id: string): Promise<T | undefined>; put(kind: string, id: string, data: Json): Promise<void> }) => Promise<R>): Promise<R> {
    return this.s.tx((r) => f({
      get: async <T extends Json>(kind: string, id: string) => (await r.sandboxObjects.get(this.kind(kind), id))?.data as T | undefined,
      put: async (kind: string, id: string, data: Json) => {
        await r.sandboxObjects.put(this.kind(kind), id, data, this.now());
      },
    }));
  }

  /**
   * One transaction: reads the record, and writes `f`'s `write` (if any). Returns `f`'s result.
   * Concurrent updates of one record are serialised by the store (retried on conflict on PostgreSQL).
   */
  async update<T extends Json, R>(kind: string, id: string, f: (current: T | undefined) => { write?: T; result: R }): Promise<R> {
    return this.s.tx(async (r) => {
      const current = (await r.sandboxObjects.get(this.kind(kind), id))?.data as T | undefined;
      const { write, result } = f(current);
      if (write) await r.sandboxObjects.put(this.kind(kind), id, write, this.now());
      return result;
    });
  }
}
