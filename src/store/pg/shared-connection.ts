/**
 * One connection that every autocommit read of the hot path shares: the request's authentication,
 * the challenge's capability and seller, the wallet an idempotency key is checked against.
 *
 * Measured (docs/performance.md, "PostgreSQL against SQLite"): the gateway's CPU per round trip
 * (a socket write, the wake-up and reads of its answer, the promise continuations) was more than
 * its CPU per statement. A pooled connection per read sent each read in its own write and woke
 * the gateway once per answer. Here the reads of every request in one run of JavaScript leave in
 * one write (the connection is in pipeline mode, corked until the run is over), PostgreSQL answers
 * them in order, and their answers come back together.
 *
 * Only point reads by key go here (no transaction, no lock, nothing slow that would hold up the
 * reads queued behind it). A statement PostgreSQL refuses fails alone (each has its own Sync); a
 * connection that fails (the server restarted, the socket closed) is dropped, its reads fail, and
 * the next read opens another.
 */
import pg from 'pg';
import { corkUntilIdle } from './cork.js';
import { execute, type Rows } from './statement.js';

export class SharedConnection {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private closed = false;

  /** `connectError`: what a failed connect is raised as (the store's error naming the redacted URL) */
  constructor(private readonly config: pg.ClientConfig, private readonly connectError: (e: unknown) => Error) {}

  /** Runs a named prepared statement on the shared connection (opened on first use). */
  run(name: string, text: string, values: unknown[]): Promise<Rows> {
    const client = this.client;
    if (client) return this.runOn(client, name, text, values);
    return this.open().then((c) => this.runOn(c, name, text, values));
  }

  private runOn(client: pg.Client, name: string, text: string, values: unknown[]): Promise<Rows> {
    corkUntilIdle(client);
    return execute(client, name, text, values).catch((e: unknown) => {
      // an answer of PostgreSQL's (it has a code) leaves the connection as it was; anything else
      // (a socket error, a connection the server ended) means this connection is done
      if (!(e && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string')) this.drop(client);
      throw e;
    });
  }

  private open(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the store is closed'));
    this.connecting ??= (async () => {
      const client = new pg.Client({ ...this.config, pipeline: true } as pg.ClientConfig);
      client.on('error', () => this.drop(client));
      client.on('end', () => this.drop(client));
      try {
        await client.connect();
      } catch (e) {
        void client.end().catch(() => undefined);
        throw this.connectError(e);
      } finally {
        this.connecting = undefined;
      }
      if (this.closed) {
        void client.end().catch(() => undefined);
        throw new Error('the store is closed');
      }
      this.client = client;
      return client;
    })();
    return this.connecting;
  }

  private drop(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
