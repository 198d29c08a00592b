// The worker behind test/helpers/db-sync.ts: runs one query at a time on PostgreSQL and answers on
// its port, then wakes the waiting test thread (Atomics.notify). Values come back as SQLite's safe
// integer mode gives them, so test helpers written against SQLite read the same: every integer
// (int2/int4/int8, and whole numerics such as sum()) a bigint, a boolean 1n/0n.
import { workerData, parentPort } from 'node:worker_threads';
import pg from 'pg';

const { url, port, shared } = workerData;
const flag = new Int32Array(shared);
const client = new pg.Client({ connectionString: url });
// the database dropped under it (WITH (FORCE), at a test's end): the next statement fails on its own
client.on('error', () => undefined);
const ready = client.connect();
const INTEGER = new Set([20, 21, 23]);

function convert(fields, row) {
  const out = {};
  for (const f of fields) {
    const v = row[f.name];
    if (v === null || v === undefined) out[f.name] = null;
    else if (INTEGER.has(f.dataTypeID)) out[f.name] = BigInt(v);
    else if (f.dataTypeID === 1700) out[f.name] = /^-?\d+$/.test(v) ? BigInt(v) : Number(v);
    else if (f.dataTypeID === 16) out[f.name] = v ? 1n : 0n;
    else out[f.name] = v;
  }
  return out;
}

parentPort.on('message', async ({ id, sql, params }) => {
  let answer;
  try {
    await ready;
    const r = await client.query(sql, params);
    answer = { rows: (r.rows ?? []).map((row) => convert(r.fields ?? [], row)), changes: r.rowCount ?? 0 };
  } catch (e) {
    answer = { error: e.message, code: e.code };
  }
  port.postMessage({ id, answer });
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
