/**
 * The PostgreSQL store's statement runner (src/store/pg/statement.ts): named prepared statements
 * whose result is described once per process, rows as arrays of parsed values. Runs when
 * AGENTPAY_TEST_DATABASE_URL is set (a fresh database, dropped afterwards).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { execute } from '../../src/store/pg/statement.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';

describe.skipIf(!pgEnabled())('PostgreSQL statements (described once, rows as arrays)', () => {
  let db: TestDatabase;
  const clients: pg.Client[] = [];
  const describes: string[] = [];

  /** a client in pipeline mode, as the store's pool makes them, whose Describe messages are counted */
  const connect = async () => {
    const c = new pg.Client({ connectionString: db.url, pipeline: true } as pg.ClientConfig);
    await c.connect();
    const conn = (c as unknown as { connection: { describe(m: { name: string }): void } }).connection;
    const describe = conn.describe.bind(conn);
    conn.describe = (m) => {
      describes.push(m.name);
      describe(m);
    };
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    db = await createTestDatabase('agentpay_stmt');
    const c = await connect();
    await c.query('CREATE TABLE t (id text PRIMARY KEY, n bigint NOT NULL, ok boolean, note text)');
  });
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await db?.drop();
  });

  it('returns rows as arrays of parsed values in select-list order, nulls as null, and no rows for a write but how many it wrote', async () => {
    const [c] = clients;
    const ins = 'INSERT INTO t (id, n, ok, note) VALUES ($1, $2, $3, $4)';
    expect(await execute(c!, 'st_ins', ins, ['a', '9007199254740993', true, null])).toEqual({ rows: [], count: 1 });
    expect(await execute(c!, 'st_ins', ins, ['b', '2', false, 'x'])).toEqual({ rows: [], count: 1 });
    expect(await execute(c!, 'st_upd', 'UPDATE t SET note = note WHERE id = ANY($1)', [['a', 'b', 'none']])).toEqual({ rows: [], count: 2 });
    const sel = 'SELECT id, n, ok, note FROM t WHERE id = ANY($1) ORDER BY id';
    // bigint comes back as text (node-postgres's parser for int8); Table.row's column types (src/store/sql/sql.ts) make it a bigint
    expect(await execute(c!, 'st_sel', sel, [['a', 'b']])).toEqual({ rows: [['a', '9007199254740993', true, null], ['b', '2', false, 'x']] });
    expect(await execute(c!, 'st_sel', sel, [['none']])).toEqual({ rows: [] });
  });

  it('describes a statement once per process, whichever connection runs it next', async () => {
    const other = await connect();
    const before = describes.length;
    const sel = 'SELECT note, id FROM t WHERE id = $1';
    for (const c of [clients[0]!, other, clients[0]!, other]) {
      expect(await execute(c, 'st_once', sel, ['b'])).toEqual({ rows: [['x', 'b']] });
    }
    expect(describes.length - before).toBe(1);
  });

  it('rejects with the server\'s error (a unique violation) and the connection serves the next statement; so does a value it cannot bind', async () => {
    const c = await connect();
    const ins = 'INSERT INTO t (id, n, ok, note) VALUES ($1, $2, $3, $4)';
    await expect(execute(c, 'st_ins', ins, ['a', '1', null, null])).rejects.toMatchObject({ code: '23505' });
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await expect(execute(c, 'st_ins', ins, ['c', '1', null, circular])).rejects.toThrow(/circular/i);
    expect(await execute(c, 'st_sel', 'SELECT id, n, ok, note FROM t WHERE id = ANY($1) ORDER BY id', [['a']])).toEqual({ rows: [['a', '9007199254740993', true, null]] });
    // several at once on one pipelined connection, one of them refused: each gets its own answer
    const results = await Promise.allSettled([
      execute(c, 'st_one', 'SELECT id FROM t WHERE id = $1', ['a']),
      execute(c, 'st_ins', ins, ['b', '1', null, null]),
      execute(c, 'st_one', 'SELECT id FROM t WHERE id = $1', ['b']),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value.rows : (r.reason as { code?: string }).code))).toEqual([[['a']], '23505', [['b']]]);
  });
});
