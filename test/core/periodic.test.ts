import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Periodic } from '../../src/domain/platform/periodic.js';

describe('Periodic', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('runs every interval, never overlapping itself, and stop() waits for the run in progress', async () => {
    let calls = 0;
    let finish!: () => void;
    const job = new Periodic(() => {
      calls++;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    job.start(100);
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toBe(1);
    await vi.advanceTimersByTimeAsync(300); // still running: the due runs are skipped
    expect(calls).toBe(1);
    let stopped = false;
    const stopping = job.stop().then(() => (stopped = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    finish();
    await stopping;
    expect(stopped).toBe(true);
    await vi.advanceTimersByTimeAsync(500); // stopped: no more runs
    expect(calls).toBe(1);
  });

  it('reports a failed run to onError and tries again at the next interval', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const job = new Periodic(async () => {
      calls++;
      if (calls === 1) throw new Error('store busy');
    });
    job.start(50, (e) => errors.push(e));
    await vi.advanceTimersByTimeAsync(50);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('store busy');
    await vi.advanceTimersByTimeAsync(50);
    expect(calls).toBe(2);
    expect(errors).toHaveLength(1);
    await job.stop();
  });

  it('does nothing for an interval of 0 (jobs switched off by configuration)', async () => {
    let calls = 0;
    const job = new Periodic(async () => void calls++);
    job.start(0);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls).toBe(0);
    await job.stop();
  });
});
