import type { Clock } from '../core/clock.js';
import type { IdGenerator } from '../core/ids.js';
import type { Store } from '../store/store.js';

/** What every domain service is given: the store, the clock and the id source. */
export interface DomainContext {
  store: Store;
  clock: Clock;
  ids: IdGenerator;
}
