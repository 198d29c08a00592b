/**
 * The live views follow the event feed: GET /v1/events, the same events `agentpay events tail`
 * and `agentpay listen` follow and webhook endpoints are sent (each recorded once, in the
 * transaction of the change it announces; docs/api/webhooks.md). Every FEED_POLL_MS the page
 * reads what is newer than the last event it saw, as the CLI does (src/cli/events.ts: the feed
 * is newest first and nothing leaves it, so "new since X" is every event read, page after page
 * from the newest, until X), and tells the views which of their data changed:
 *   approvals  a purchase held for a person (approval.requested)
 *   money      a paid call resolved (payment.*), money in or out (topup.*, deposit.*, payout.*), …
 * A key without `rail:read` (an agent key) cannot read the feed: the page says so and keeps its
 * 30-second reload.
 */
import { useEffect, useState } from 'react';
import { ApiError, type Api } from './api.js';

export const FEED_POLL_MS = 2_000;
const PAGE = 50;
/** past this many pages since the last poll, the rest is not read: the views reload whole anyway */
const MAX_PAGES = 10;

export interface FeedEvent {
  id: string;
  type: string;
  createdAt: string;
  data: Record<string, unknown>;
}

export type Topic = 'approvals' | 'money';

export const topicOf = (type: string): Topic => (type.startsWith('approval.') ? 'approvals' : 'money');

/** How many times each topic's data changed since the page started following, and the feed's state. */
export interface Feed {
  approvals: number;
  money: number;
  /** following | refused: the key cannot read events (no rail:read) | starting */
  state: 'starting' | 'following' | 'refused';
  /** the newest event seen, for the header's live line */
  last?: FeedEvent;
}

/** Every event after `since` (all there are when null), oldest first; `complete` false when MAX_PAGES were not enough. */
export async function eventsSince(client: Api, since: string | null): Promise<{ events: FeedEvent[]; complete: boolean }> {
  const fresh: FeedEvent[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await client.get<{ events: FeedEvent[]; nextCursor?: string }>(`/v1/events?limit=${PAGE}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    for (const e of page.events) {
      if (e.id === since) return { events: fresh.reverse(), complete: true };
      fresh.push(e);
    }
    if (!page.nextCursor) return { events: fresh.reverse(), complete: true };
    after = page.nextCursor;
  }
  return { events: fresh.reverse(), complete: false };
}

/** Follows the feed while `enabled`; a failed poll (the gateway restarting) is tried again at the next one. */
export function useEventFeed(client: Api, enabled: boolean): Feed {
  const [feed, setFeed] = useState<Feed>({ approvals: 0, money: 0, state: 'starting' });
  useEffect(() => {
    if (!enabled) return;
    // another key (signed in again) starts over: its feed, its marker
    setFeed((f) => ({ ...f, state: 'starting', last: undefined }));
    let live = true;
    let marker: string | null | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        if (marker === undefined) {
          // start after the newest event there is now: what the page loads already shows it
          const { events } = await client.get<{ events: FeedEvent[] }>('/v1/events?limit=1');
          marker = events[0]?.id ?? null;
          if (live) setFeed((f) => ({ ...f, state: 'following' }));
        } else {
          const { events, complete } = await eventsSince(client, marker);
          if (events.length && live) {
            marker = events.at(-1)!.id;
            const topics = new Set(complete ? events.map((e) => topicOf(e.type)) : (['approvals', 'money'] as const));
            setFeed((f) => ({
              approvals: f.approvals + (topics.has('approvals') ? 1 : 0),
              money: f.money + (topics.has('money') ? 1 : 0),
              state: 'following',
              last: events.at(-1),
            }));
          }
        }
      } catch (e) {
        if (e instanceof ApiError && (e.status === 403 || e.status === 401)) {
          if (live) setFeed((f) => ({ ...f, state: 'refused' }));
          return;
        }
        // INVALID_CURSOR cannot happen with an id the feed gave; anything else is waited out
      }
      if (live) timer = setTimeout(() => void poll(), FEED_POLL_MS);
    };
    void poll();
    return () => {
      live = false;
      if (timer) clearTimeout(timer);
    };
  }, [client, enabled]);
  return feed;
}
