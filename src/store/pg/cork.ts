import type pg from 'pg';

type Stream = { cork(): void; uncork(): void };
const corked = new WeakSet<Stream>();

/**
 * Holds back a pooled connection's socket writes until the current run of JavaScript (its
 * promise continuations included) is over, so every statement sent in that run leaves in one
 * write: a BEGIN with the first statement, a write not waited for with the read after it, the
 * last writes with COMMIT. The connections are in pipeline mode (pg-store.ts): PostgreSQL runs
 * them in order and answers each; only the socket writes are merged. Uses node-postgres's
 * `connection.stream`; without it statements simply go one write each.
 */
export function corkUntilIdle(conn: pg.Pool | pg.PoolClient | pg.Client): void {
  const stream = (conn as unknown as { connection?: { stream?: Partial<Stream> } }).connection?.stream;
  if (!stream?.cork || !stream.uncork || corked.has(stream as Stream)) return;
  const st = stream as Stream;
  corked.add(st);
  st.cork();
  process.nextTick(() => {
    corked.delete(st);
    st.uncork();
  });
}
