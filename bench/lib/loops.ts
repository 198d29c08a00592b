/**
 * Load shapes: closed loop (N calls always in flight: throughput) or open loop (calls start
 * on a fixed schedule whatever the answers do: latency without coordinated omission; a
 * call's latency counts from its scheduled start).
 */
import { performance } from 'node:perf_hooks';

export interface RunResult {
  completed: number;
  errors: number;
  /** distinct error messages, first few */
  errorSamples: string[];
  /** open loop only: scheduled calls not started because too many were in flight */
  dropped: number;
  elapsedMs: number;
  /** latencies of the completed calls, ms */
  latencies: number[];
}

/** One call; `i` counts the calls started, to spread them over wallets. */
export type Call = (i: number) => Promise<void>;

function newResult(): RunResult & { seen: Set<string> } {
  return { completed: 0, errors: 0, errorSamples: [], dropped: 0, elapsedMs: 0, latencies: [], seen: new Set() };
}

function record(r: ReturnType<typeof newResult>, e: unknown): void {
  r.errors++;
  const m = e instanceof Error ? e.message : String(e);
  if (r.seen.size < 5 && !r.seen.has(m)) {
    r.seen.add(m);
    r.errorSamples.push(m);
  }
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function closedLoop(call: Call, concurrency: number, durationMs: number): Promise<RunResult> {
  const r = newResult();
  const t0 = performance.now();
  const end = t0 + durationMs;
  let i = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now();
      try {
        await call(i++);
        r.completed++;
        r.latencies.push(round2(performance.now() - start));
      } catch (e) {
        record(r, e);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  r.elapsedMs = performance.now() - t0;
  const { seen: _s, ...out } = r;
  return out;
}

export async function openLoop(call: Call, rate: number, durationMs: number, maxInFlight: number): Promise<RunResult> {
  const r = newResult();
  const interval = 1000 / rate;
  const t0 = performance.now();
  let started = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  await new Promise<void>((done) => {
    const tick = () => {
      const now = performance.now();
      const due = Math.min(Math.floor((now - t0) / interval) + 1, Math.ceil(durationMs / interval));
      while (started < due) {
        const scheduled = t0 + started * interval;
        const i = started++;
        if (inFlight >= maxInFlight) {
          r.dropped++;
          continue;
        }
        inFlight++;
        const p: Promise<void> = call(i).then(
          () => {
            r.completed++;
            r.latencies.push(round2(performance.now() - scheduled));
          },
          (e) => record(r, e),
        ).finally(() => {
          inFlight--;
          pending.delete(p);
        });
        pending.add(p);
      }
      if (now - t0 >= durationMs) done();
      else setTimeout(tick, 1);
    };
    tick();
  });
  await Promise.all(pending);
  r.elapsedMs = performance.now() - t0;
  const { seen: _s, ...out } = r;
  return out;
}
