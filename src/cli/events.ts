/**
 * The work of `agentpay events list` and `agentpay events tail`: the caller's alerts
 * (GET /v1/events, docs/api/rails.md#events) as a page, or followed as they are written.
 *
 * The feed is newest first, in the order the gateway recorded the events, and nothing is ever
 * removed from it. So "what is new since event X" is every event read, page after page from the
 * newest, until X comes up; pages are read unfiltered and the type filter is applied here, so the
 * event a follower last saw is found whatever its type.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Errors, Flags } from '@oclif/core';
import { EVENT_TYPES, type EventType } from 'agentpay-sdk/contract';
import { AgentpayError } from 'agentpay-sdk/errors';
import type { AgentpayClient, RailEvent } from 'agentpay-sdk/client';
import { networkFailure } from './errors/index.js';
import { moneyText, renderTable } from './output.js';

/** The largest page the gateway serves. */
const PAGE_SIZE = 200;

/**
 * --type: one of the event types. A string flag checked here rather than an option flag, whose
 * usage line would list every type on one line wider than a terminal.
 */
export const eventTypeFlag = Flags.custom<EventType>({
  description: `only events of this type: ${EVENT_TYPES.join(', ')}`,
  helpValue: 'TYPE',
  parse: async (input) => {
    if ((EVENT_TYPES as readonly string[]).includes(input)) return input as EventType;
    // oclif prefixes the flag; the one catch makes it `--type: must be one of …`, a usage error (exit 2)
    throw new Errors.CLIError(`must be one of ${EVENT_TYPES.join(', ')} (got ${JSON.stringify(input)})`);
  },
});

/**
 * `key=value` pairs of an event's data, in the order the gateway sent them, for people. An amount
 * (`…Minor`) of an event that names its currency or asset is shown as tables show amounts
 * (`amount=6.00 USD`), `assetAmountMinor` in `asset`; without one it stays as sent, in minor units, as its name says.
 */
export function eventSummary(e: RailEvent): string {
  const unit = typeof e.data.currency === 'string' ? e.data.currency : typeof e.data.asset === 'string' ? e.data.asset : undefined;
  return Object.entries(e.data)
    .map(([k, v]) => {
      // an asset amount next to a currency amount (deposit.credited) is in the asset's units
      const u = k === 'assetAmountMinor' && typeof e.data.asset === 'string' ? e.data.asset : unit;
      if (u && k.endsWith('Minor') && typeof v === 'string' && /^-?\d+$/.test(v)) return `${k.slice(0, -'Minor'.length)}=${moneyText(v, u)}`;
      return `${k}=${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`;
    })
    .join(' ');
}

export function eventTable(events: readonly RailEvent[]): string {
  return renderTable(events, [
    { header: 'ID', get: (e) => e.id },
    { header: 'TYPE', get: (e) => e.type },
    { header: 'CREATED', get: (e) => e.createdAt },
    { header: 'DATA', get: (e) => eventSummary(e) },
  ], '(no events)');
}

/** One line of `events tail` for a person. */
export const eventLine = (e: RailEvent): string => `${e.createdAt}  ${e.type}  ${e.id}  ${eventSummary(e)}`;

/** The id of the newest event now, or null when there is none: where a follower starts. */
export async function newestEventId(client: AgentpayClient): Promise<string | null> {
  const { events } = await client.rail.events({ limit: 1 });
  return events[0]?.id ?? null;
}

/**
 * Every event recorded after `since` (all of them when `since` is null), oldest first.
 * A `since` the caller does not own is refused by the gateway (INVALID_CURSOR, naming `after`).
 */
export async function eventsSince(client: AgentpayClient, since: string | null, pageSize = PAGE_SIZE): Promise<RailEvent[]> {
  const fresh: RailEvent[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await client.rail.events({ limit: pageSize, ...(after ? { after } : {}) });
    for (const e of page.events) {
      if (e.id === since) return fresh.reverse();
      fresh.push(e);
    }
    if (!page.nextCursor) return fresh.reverse();
    after = page.nextCursor;
  }
}

/** A failure a follower waits out: the gateway unreachable, restarting, overloaded or rate limiting. */
export function isTransient(err: unknown): boolean {
  if (networkFailure(err)) return true;
  return err instanceof AgentpayError && (err.code === 'RATE_LIMITED' || err.code === 'SERVICE_UNAVAILABLE' || (err.status !== undefined && err.status >= 500));
}

export interface FollowOptions {
  /** start after this event; null: after the newest event there is when following starts */
  since?: string | null | undefined;
  /** only events of this type are handed on */
  type?: string | undefined;
  intervalMs: number;
  /** stop after this many events */
  count?: number | undefined;
  /** stop after this long without `count` events */
  timeoutMs?: number | undefined;
  onEvent: (e: RailEvent) => void;
  /** following has started: events after `after` (every event, when null) are handed on */
  onStart?: (after: string | null) => void;
  /** a note for people: the gateway went away, or came back */
  onNote: (message: string) => void;
  /** stops following (Ctrl-C) */
  signal?: AbortSignal | undefined;
  /** the time now, in milliseconds (tests move it) */
  now?: () => number;
  /** waits `ms` unless `signal` aborts first (tests skip the wait) */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Why following ended, and how many events were handed on. */
export interface FollowEnd {
  end: 'count' | 'timeout' | 'stopped';
  handed: number;
}

const waitUnlessAborted = (ms: number, signal?: AbortSignal) => sleep(ms, undefined, signal ? { signal } : {}).catch(() => undefined);

/**
 * Hands on each new event once, oldest first, polling every `intervalMs` until `count` events
 * were handed on, `timeoutMs` passed or `signal` aborted. A transient failure (see isTransient)
 * is noted once and retried at the same interval; any other failure is thrown.
 */
export async function followEvents(client: AgentpayClient, o: FollowOptions): Promise<FollowEnd> {
  const now = o.now ?? Date.now;
  const wait = o.wait ?? waitUnlessAborted;
  const deadline = o.timeoutMs === undefined ? Infinity : now() + o.timeoutMs;
  // a --since the caller does not own is refused by the gateway here, before anything else
  if (o.since) await client.rail.events({ after: o.since, limit: 1 });
  let marker = o.since ? o.since : await newestEventId(client);
  o.onStart?.(marker);
  let handed = 0;
  let failing: string | undefined;
  for (;;) {
    if (o.signal?.aborted) return { end: 'stopped', handed };
    try {
      const fresh = await eventsSince(client, marker);
      if (failing) o.onNote('the gateway answers again; following');
      failing = undefined;
      for (const e of fresh) {
        marker = e.id;
        if (o.type && e.type !== o.type) continue;
        o.onEvent(e);
        handed++;
        if (o.count !== undefined && handed >= o.count) return { end: 'count', handed };
      }
    } catch (err) {
      if (!isTransient(err)) throw err;
      const why = networkFailure(err)?.cause ?? (err instanceof AgentpayError ? err.code : String(err));
      if (failing !== why) o.onNote(`the gateway did not answer (${why}); trying again every ${o.intervalMs / 1000} s`);
      failing = why;
    }
    if (o.signal?.aborted) return { end: 'stopped', handed };
    const left = deadline - now();
    if (left <= 0) return { end: 'timeout', handed };
    await wait(Math.min(o.intervalMs, left), o.signal);
  }
}
