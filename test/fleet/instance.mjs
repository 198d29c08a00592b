// One gateway instance of a fleet test (fleet.test.ts), in a process of its own: the compiled
// gateway (dist/, built by the test global setup) on a shared PostgreSQL database and data
// directory. Reports over IPC: {type: 'ready', baseUrl, caCertPath, creds?} once serving, and
// {type: 'duty', duty, pid} each time it runs the sweeper or the rail job. Its clock is the
// system clock plus an offset the test sets with the IPC message {type: 'clock', offsetMs}
// (test-only: a ManualClock cannot cross processes, and no route of the gateway moves time).
import { startGateway } from '../../dist/src/gateway/server.js';
import { ensureDevCredentials } from '../../dist/src/gateway/dev-credentials.js';

const [dataDir, database, tickMs, withCreds, offset] = process.argv.slice(2);
let offsetMs = Number(offset ?? 0);
const clock = { now: () => Date.now() + offsetMs };
const gw = await startGateway({
  dataDir, database, port: 0, httpPort: null, logger: false, clock,
  config: {
    mode: 'sandbox', sweepIntervalMs: Number(tickMs),
    rails: { adapters: 'sandbox', pollIntervalMs: Number(tickMs) },
    rateLimit: { max: 100_000, windowMs: 1000, signupMax: 10_000, signupWindowMs: 60_000 },
  },
});
// count the duty runs (the timers call these methods by name at each tick)
const sweeper = gw.services.sweeper;
const sweepOnce = sweeper.sweepOnce.bind(sweeper);
sweeper.sweepOnce = async () => {
  process.send?.({ type: 'duty', duty: 'sweeper', pid: process.pid });
  return sweepOnce();
};
const jobs = gw.services.rails.jobs;
const runOnce = jobs.runOnce.bind(jobs);
jobs.runOnce = async (onError) => {
  process.send?.({ type: 'duty', duty: 'rail-jobs', pid: process.pid });
  return runOnce(onError);
};
const creds = withCreds === '1' ? await ensureDevCredentials(gw.services.ctx, dataDir) : undefined;
process.send?.({ type: 'ready', baseUrl: gw.baseUrl, caCertPath: gw.tls.caCertPath, creds });
process.on('message', async (m) => {
  if (m === 'stop') {
    await gw.close();
    process.exit(0);
  }
  if (m?.type === 'clock') {
    offsetMs = Number(m.offsetMs);
    process.send?.({ type: 'clock-set', offsetMs });
  }
});
