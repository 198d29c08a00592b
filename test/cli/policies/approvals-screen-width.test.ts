/**
 * The live approvals screen on a terminal that reports 0 columns (some CI ptys do): it is
 * laid out 80 wide instead of one character per line. The screen runs through renderLive,
 * as `agentpay approvals` runs it, on stand-in terminal streams.
 */
import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

// `agentpay approvals` starts the live screen only where canPrompt() holds, that is with no CI
// variable set; ink decides once, when it is first loaded, to draw nothing but the last frame
// when one is set. So the screen is loaded here as the command loads it, without them, also when
// the suite itself runs in CI.
vi.hoisted(() => {
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
});
import type { Approval } from '../../../packages/sdk/src/types.js';
import { ApprovalsScreen } from '../../../src/cli/ui/approvals-screen.js';
import { FALLBACK_COLUMNS, renderLive, withColumns } from '../../../src/cli/ui/render.js';

/** A terminal's output side that reports `columns` (0: the pty says nothing useful). */
class FakeStdout extends EventEmitter {
  isTTY = true;
  rows = 0;
  /** every write: ink writes a whole frame at a time */
  writes: string[] = [];
  constructor(public columns: number) {
    super();
  }
  get text(): string {
    return this.writes.join('');
  }
  write = (chunk: string) => {
    this.writes.push(chunk);
    return true;
  };
}

/** A terminal's input side in raw mode, as ink reads it: 'readable' then read(). */
class FakeStdin extends EventEmitter {
  isTTY = true;
  private data: string | null = null;
  type(s: string) {
    this.data = s;
    this.emit('readable');
    this.emit('data', s);
  }
  read = () => {
    const d = this.data;
    this.data = null;
    return d;
  };
  setEncoding() {}
  setRawMode() {}
  resume() {}
  pause() {}
  ref() {}
  unref() {}
}

const approval: Approval = {
  id: 'apr_1',
  agentId: 'agent-1',
  walletId: 'wal_1',
  capabilityId: 'cap_1',
  amountMinor: '2501',
  currency: 'USD',
  rule: 'price > 2000',
  policyId: 'pol_hold',
  status: 'pending',
  createdAt: new Date().toISOString(),
} as Approval;

/** The lines of every frame the screen drew, escape sequences (colours, cursor moves) removed. */
const lines = (out: FakeStdout) => out.writes.flatMap((w) => stripVTControlCharacters(w).split('\n'));

// Such a pty answers every way of asking its size with 0; ink's own fallback reads COLUMNS/LINES
// among others, so they say 0 here too, whatever terminal runs the tests.
const saved = { COLUMNS: process.env.COLUMNS, LINES: process.env.LINES };
beforeEach(() => {
  process.env.COLUMNS = '0';
  process.env.LINES = '0';
});
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

async function showUntilQuit(stdout: FakeStdout): Promise<void> {
  const stdin = new FakeStdin();
  const done = renderLive(
    ApprovalsScreen,
    { initial: [approval], load: async () => [approval], approve: async () => undefined, deny: async () => undefined, resolvedBy: 'alice', intervalMs: 60_000 },
    { stdout: stdout as unknown as NodeJS.WriteStream, stdin: stdin as unknown as NodeJS.ReadStream, stderr: new FakeStdout(0) as unknown as NodeJS.WriteStream },
  );
  const end = Date.now() + 30_000;
  while (!stripVTControlCharacters(stdout.text).includes('q quit')) {
    if (Date.now() > end) throw new Error(`the screen never drew its help line; output:\n${stdout.text}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  stdin.type('q');
  await done;
}

describe('renderLive', () => {
  it('lays a screen out 80 columns wide when the terminal reports 0 columns', async () => {
    const stdout = new FakeStdout(0);
    await showUntilQuit(stdout);
    const drawn = lines(stdout);
    expect(drawn).toContain('Pending approvals (1)');
    expect(drawn.some((l) => l.startsWith('› agent-1  cap_1  ') && l.endsWith('apr_1'))).toBe(true);
    expect(drawn).toContain('↑/↓ or j/k move · a approve · d deny · q quit');
    expect(drawn.filter((l) => l.length > FALLBACK_COLUMNS)).toEqual([]);
  });

  it('uses the width a terminal reports, even a narrow one', async () => {
    const stdout = new FakeStdout(30);
    await showUntilQuit(stdout);
    const drawn = lines(stdout);
    expect(drawn).toContain('Pending approvals (1)');
    expect(drawn.filter((l) => l.length > 30)).toEqual([]);
    expect(drawn.some((l) => l.startsWith('› agent-1  cap_1'))).toBe(true);
  });
});

describe('withColumns', () => {
  it('leaves a stream that reports its width as it is', () => {
    const stdout = new FakeStdout(120) as unknown as NodeJS.WriteStream;
    expect(withColumns(stdout)).toBe(stdout);
  });

  it('reports 80 for a stream reporting 0 or no columns, then the real width once there is one, writing to the stream itself', () => {
    const fake = new FakeStdout(0);
    const view = withColumns(fake as unknown as NodeJS.WriteStream);
    expect(view.columns).toBe(FALLBACK_COLUMNS);
    fake.columns = undefined as unknown as number;
    expect(view.columns).toBe(FALLBACK_COLUMNS);
    fake.columns = 132;
    expect(view.columns).toBe(132);
    view.write('hello');
    expect(fake.text).toBe('hello');
    expect(view.isTTY).toBe(true);
  });
});
