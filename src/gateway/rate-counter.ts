/**
 * Fixed-window request counters for the rate limits: in this process (one gateway), or in
 * Redis (every gateway of a fleet sharing one Redis counts on the same counters).
 *
 * When Redis does not answer (refused, dropped, slower than COMMAND_TIMEOUT_MS), the gateway
 * FAILS OPEN TO ITS OWN COUNTERS: it keeps serving and counts in this process with the same
 * limits, until Redis answers again (tried again at most every RETRY_MS). A Redis outage then
 * costs precision (the fleet allows up to N instances × the limit) but never availability:
 * the limits protect capacity, not money, which the database guards on its own (balances,
 * policies, one charge per proof). Failing closed would turn a Redis outage into a full
 * outage of paid calls. Each outage and recovery is logged once.
 */
import { Redis } from 'ioredis';
import type { Clock } from '../core/clock.js';

export interface WindowCount {
  /** what the key counted in its current window, this request included */
  current: number;
  /** milliseconds until that window ends */
  ttlMs: number;
}

export interface RateCounter {
  /** Counts one on `key` (its window starts with its first count), also when past a limit. */
  incr(key: string, windowMs: number): Promise<WindowCount>;
  /**
   * Counts `n` on each key unless one of them would pass `max`: then counts none. All or
   * nothing, atomically (one Redis script; one synchronous step in process).
   */
  take(entries: readonly { key: string; n: number }[], max: number, windowMs: number): Promise<{ allowed: boolean; counts: WindowCount[] }>;
  close(): Promise<void>;
}

/** How many keys an in-process counter remembers; the oldest window is forgotten first. */
const LOCAL_KEYS = 10_000;

export class LocalCounter implements RateCounter {
  private readonly windows = new Map<string, { count: number; endsAt: number }>();
  constructor(private readonly clock: Clock) {}

  private window(key: string, windowMs: number, now: number) {
    let w = this.windows.get(key);
    if (!w || w.endsAt <= now) {
      if (w) this.windows.delete(key);
      w = { count: 0, endsAt: now + windowMs };
      if (this.windows.size >= LOCAL_KEYS) this.windows.delete(this.windows.keys().next().value!);
      this.windows.set(key, w);
    }
    return w;
  }

  async incr(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.clock.now();
    const w = this.window(key, windowMs, now);
    w.count++;
    return { current: w.count, ttlMs: w.endsAt - now };
  }

  async take(entries: readonly { key: string; n: number }[], max: number, windowMs: number) {
    const now = this.clock.now();
    const ws = entries.map((e) => this.window(e.key, windowMs, now));
    const allowed = entries.every((e, i) => ws[i]!.count + e.n <= max);
    if (allowed) entries.forEach((e, i) => (ws[i]!.count += e.n));
    return { allowed, counts: ws.map((w) => ({ current: w.count, ttlMs: w.endsAt - now })) };
  }

  async close(): Promise<void> {}
}

/** INCR; a key without an expiry (new) gets the window. Returns {count, ms left}. */
const INCR_SCRIPT = `
local c = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {c, ttl}
`;

/** ARGV: max, windowMs, then one n per key. Returns {allowed (1/0), count1, ttl1, count2, ttl2, ...}. */
const TAKE_SCRIPT = `
local max = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local ok = 1
for i = 1, #KEYS do
  local c = tonumber(redis.call('GET', KEYS[i]) or '0')
  if c + tonumber(ARGV[2 + i]) > max then ok = 0 end
end
local out = {ok}
for i = 1, #KEYS do
  local c
  if ok == 1 then c = redis.call('INCRBY', KEYS[i], ARGV[2 + i]) else c = tonumber(redis.call('GET', KEYS[i]) or '0') end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then
    if c > 0 then redis.call('PEXPIRE', KEYS[i], window) end
    ttl = window
  end
  out[#out + 1] = c
  out[#out + 1] = ttl
end
return out
`;

type ScriptedRedis = Redis & {
  agentpayRateIncr(key: string, windowMs: number): Promise<[number, number]>;
  agentpayRateTake(...args: (string | number)[]): Promise<number[]>;
};

/** How long a Redis command may take before this request counts in process instead. */
export const COMMAND_TIMEOUT_MS = 250;
/** While Redis is down, how often a request tries it again. */
export const RETRY_MS = 1000;

/**
 * Counters in Redis under `keyPrefix`. A caller's keys share a hash tag, so that a batch's
 * several counters stay in one slot of a Redis Cluster.
 */
export class RedisCounter implements RateCounter {
  constructor(
    private readonly redis: ScriptedRedis,
    private readonly keyPrefix: string,
  ) {}

  private k(key: string) {
    return `${this.keyPrefix}${key}`;
  }

  async incr(key: string, windowMs: number): Promise<WindowCount> {
    const [current, ttlMs] = await this.redis.agentpayRateIncr(this.k(key), windowMs);
    return { current, ttlMs };
  }

  async take(entries: readonly { key: string; n: number }[], max: number, windowMs: number) {
    const r = await this.redis.agentpayRateTake(entries.length, ...entries.map((e) => this.k(e.key)), max, windowMs, ...entries.map((e) => e.n));
    const counts = entries.map((_, i) => ({ current: Number(r[1 + 2 * i]), ttlMs: Number(r[2 + 2 * i]) }));
    return { allowed: r[0] === 1, counts };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}

/** A URL as it may be logged: no user or password. */
export function redactRedisUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.username || u.password) {
      u.username = '';
      u.password = '';
    }
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

export class RedisUnreachableError extends Error {
  readonly code = 'REDIS_UNREACHABLE';
  constructor(
    readonly url: string,
    readonly causeMessage: string,
  ) {
    super(`could not connect to Redis at ${url}: ${causeMessage}`);
    this.name = 'RedisUnreachableError';
  }
}

export interface SharedCounterEvents {
  /** Redis stopped answering: counting in process from now on */
  down(err: Error): void;
  /** Redis answers again */
  up(): void;
}

/**
 * Connects to Redis once (a wrong URL or a Redis that is not there refuses the start:
 * RedisUnreachableError, with the URL redacted) and returns the fleet counter: Redis while it
 * answers, this process's counters while it does not.
 */
export async function openSharedCounter(opts: { url: string; keyPrefix: string; clock: Clock; events?: Partial<SharedCounterEvents> }): Promise<RateCounter> {
  const shown = redactRedisUrl(opts.url);
  let redis: ScriptedRedis;
  try {
    redis = new Redis(opts.url, {
      lazyConnect: true,
      // a command while disconnected fails at once instead of waiting in a queue
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: COMMAND_TIMEOUT_MS,
      connectTimeout: 2000,
      retryStrategy: (times) => Math.min(times * 100, RETRY_MS),
    }) as ScriptedRedis;
  } catch (e) {
    throw new RedisUnreachableError(shown, (e as Error).message);
  }
  // without a listener ioredis prints every reconnection failure; the fallback logs outages once
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    throw new RedisUnreachableError(shown, (e as Error).message);
  }
  redis.defineCommand('agentpayRateIncr', { numberOfKeys: 1, lua: INCR_SCRIPT });
  redis.defineCommand('agentpayRateTake', { lua: TAKE_SCRIPT });
  return new FallbackCounter(new RedisCounter(redis, opts.keyPrefix), new LocalCounter(opts.clock), opts.events ?? {});
}

/** Redis while it answers; in process while it does not (see the top of this file). */
export class FallbackCounter implements RateCounter {
  private downSince: number | null = null;
  private retryAt = 0;

  constructor(
    private readonly shared: RateCounter,
    private readonly local: RateCounter,
    private readonly events: Partial<SharedCounterEvents>,
  ) {}

  /** true while counting in process because Redis did not answer */
  get degraded(): boolean {
    return this.downSince !== null;
  }

  private async run<T>(f: (c: RateCounter) => Promise<T>): Promise<T> {
    // real elapsed time, not the injected clock: this is about the network, and a clock a test holds still must not stop the retries
    const now = performance.now();
    if (this.downSince !== null && now < this.retryAt) return f(this.local);
    try {
      const r = await f(this.shared);
      if (this.downSince !== null) {
        this.downSince = null;
        this.events.up?.();
      }
      return r;
    } catch (e) {
      if (this.downSince === null) {
        this.downSince = now;
        this.events.down?.(e as Error);
      }
      this.retryAt = performance.now() + RETRY_MS;
      return f(this.local);
    }
  }

  incr(key: string, windowMs: number) {
    return this.run((c) => c.incr(key, windowMs));
  }

  take(entries: readonly { key: string; n: number }[], max: number, windowMs: number) {
    return this.run((c) => c.take(entries, max, windowMs));
  }

  async close(): Promise<void> {
    await this.shared.close();
    await this.local.close();
  }
}
