/**
 * A voucher store in Redis, shared by several seller processes (instances behind one load balancer).
 *
 * One key per session (`<prefix>v:<sessionId>`, the record as JSON) and one set of the sessions
 * (`<prefix>sessions`, for the claims). Every write is one Lua script, so it is atomic: `replace`
 * sets the record only when it is still the one the process read (a compare-and-set), which is how
 * the checker keeps two instances from both accepting one sequence: the one that loses reads again
 * and decides again (a retry of the same voucher, or the corrective 402).
 *
 * Durable as the Redis is: the seller serves a call once Redis has the record, which survives the
 * seller's crash; for Redis's own crash run it with `appendonly yes` (and `appendfsync always` to
 * lose nothing acknowledged). Records hold no secret (grants and vouchers are signed, not secret),
 * and the seller's private receipt key is never put in Redis: a seller on this store gives
 * `sessions.privateKeyPem`, the same on every instance.
 *
 * The client: an ioredis client the seller already has (`client`), or a `url` from which this
 * store makes one (ioredis is then an optional peer dependency of the SDK: `npm i ioredis`).
 * Any client with ioredis's `get`, `mget`, `smembers` and `eval` will do.
 */
import { AgentpayError } from '../errors.js';
import type { VoucherRecord, VoucherStore } from './sessions.js';

/** What the store uses of a Redis client (ioredis's signatures). */
export interface RedisClientLike {
  get(key: string): Promise<string | null>;
  mget(...keys: string[]): Promise<(string | null)[]>;
  smembers(key: string): Promise<string[]>;
  eval(script: string, numKeys: number, ...args: string[]): Promise<unknown>;
  quit?(): Promise<unknown>;
}

export interface RedisVoucherStoreOptions {
  /** an ioredis (or compatible) client; not closed by `close()` */
  client?: RedisClientLike;
  /** or where Redis is (redis://host:port/db): the store makes an ioredis client, and closes it in `close()` */
  url?: string;
  /** the prefix of every key (default `agentpay:vouchers:`): one per seller sharing a Redis */
  prefix?: string;
}

const SAFE = /^[A-Za-z0-9_-]{1,100}$/;

/** KEYS: record, set. ARGV: record JSON, session id. */
const PUT = `redis.call('SET', KEYS[1], ARGV[1]); redis.call('SADD', KEYS[2], ARGV[2]); return 1`;
/** KEYS: record, set. ARGV: next JSON, session id, '1' when a record is expected, the expected JSON. */
const REPLACE = `
local current = redis.call('GET', KEYS[1])
if ARGV[3] == '1' then
  if current ~= ARGV[4] then return 0 end
elseif current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1`;
/** KEYS: record, set. ARGV: session id. */
const DELETE = `redis.call('DEL', KEYS[1]); redis.call('SREM', KEYS[2], ARGV[1]); return 1`;

export class RedisVoucherStore implements VoucherStore {
  readonly shared = true;
  private readonly prefix: string;
  private readonly client: Promise<RedisClientLike>;
  private readonly owned: boolean;
  /** the JSON each record `get` returned was read from: what `replace` compares with */
  private readonly read = new WeakMap<VoucherRecord, string>();

  constructor(opts: RedisVoucherStoreOptions) {
    if (!opts.client && !opts.url) throw new AgentpayError('VALIDATION_FAILED', 'RedisVoucherStore: give `client` (an ioredis client) or `url` (redis://host:port)', { details: { field: 'client' } });
    this.prefix = opts.prefix ?? 'agentpay:vouchers:';
    this.owned = !opts.client;
    this.client = opts.client ? Promise.resolve(opts.client) : connect(opts.url!);
    this.client.catch(() => undefined); // told to each caller
  }

  private key(sessionId: string): string {
    if (!SAFE.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
    return `${this.prefix}v:${sessionId}`;
  }

  private get set(): string {
    return `${this.prefix}sessions`;
  }

  private parse(text: string): VoucherRecord {
    const record = JSON.parse(text) as VoucherRecord;
    this.read.set(record, text);
    return record;
  }

  async get(sessionId: string): Promise<VoucherRecord | undefined> {
    const text = await (await this.client).get(this.key(sessionId));
    return text === null ? undefined : this.parse(text);
  }

  async put(sessionId: string, record: VoucherRecord): Promise<void> {
    await (await this.client).eval(PUT, 2, this.key(sessionId), this.set, JSON.stringify(record), sessionId);
  }

  async replace(sessionId: string, expected: VoucherRecord | undefined, next: VoucherRecord): Promise<boolean> {
    const was = expected === undefined ? '' : (this.read.get(expected) ?? JSON.stringify(expected));
    const done = await (await this.client).eval(REPLACE, 2, this.key(sessionId), this.set, JSON.stringify(next), sessionId, expected === undefined ? '0' : '1', was);
    return Number(done) === 1;
  }

  async delete(sessionId: string): Promise<void> {
    await (await this.client).eval(DELETE, 2, this.key(sessionId), this.set, sessionId);
  }

  async all(): Promise<VoucherRecord[]> {
    const client = await this.client;
    const ids = (await client.smembers(this.set)).filter((id) => SAFE.test(id));
    const out: VoucherRecord[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const texts = await client.mget(...ids.slice(i, i + 500).map((id) => this.key(id)));
      for (const text of texts) if (text !== null) out.push(this.parse(text));
    }
    return out;
  }

  /** Closes the client this store made from `url` (a client given is the caller's to close). */
  async close(): Promise<void> {
    if (this.owned) await (await this.client.catch(() => undefined))?.quit?.();
  }
}

async function connect(url: string): Promise<RedisClientLike> {
  const name = 'ioredis'; // an optional peer dependency, loaded only when a url is given
  let mod: { Redis: new (url: string, opts: Record<string, unknown>) => RedisClientLike };
  try {
    mod = (await import(name)) as typeof mod;
  } catch {
    throw new AgentpayError('VALIDATION_FAILED', 'RedisVoucherStore: `url` needs the ioredis package (npm i ioredis), or pass an ioredis-compatible `client`', { details: { field: 'url' } });
  }
  return new mod.Redis(url, { lazyConnect: false, maxRetriesPerRequest: 3 });
}
