import type { Clock } from '../../core/clock.js';
import type { IdGenerator } from '../../core/ids.js';
import type { Store } from '../../store/store.js';
import type { EventType } from 'agentpay-sdk/contract';

/** What every domain service is given: the store, the clock and the id source (and, optionally, an observer). */
export interface DomainContext {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
  observer?: DomainObserver;
}

/**
 * Told of what the domain does, for metrics, without the domain knowing who listens. Called
 * inside the transaction that does it: one that rolls back afterwards (rare) was still told.
 */
export interface DomainObserver {
  /** an event of GET /v1/events was recorded */
  event?(type: EventType): void;
}
