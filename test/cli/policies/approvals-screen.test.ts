/**
 * The live approvals screen (`agentpay approvals`), rendered with ink-testing-library
 * against an in-memory approvals source that behaves like the gateway: a decided
 * approval stops being pending. Time is real; the screen polls every 500 ms.
 */
import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Approval } from '../../../packages/sdk/src/types.js';
import { ApprovalsScreen } from '../../../src/cli/ui/approvals-screen.js';
import { until } from './until-frame.js';
import { until as waitUntil } from '../../helpers/wait.js';

const DOWN = '\u001B[B';
const UP = '\u001B[A';

function approval(n: number, over: Partial<Approval> = {}): Approval {
  return {
    id: `apr_${n}`,
    agentId: `agent-${n}`,
    walletId: `wal_${n}`,
    capabilityId: `cap_${n}`,
    amountMinor: `${2500 + n}`,
    currency: 'USD',
    rule: 'price > 2000',
    policyId: 'pol_hold',
    status: 'pending',
    createdAt: new Date(Date.now() - 5_000).toISOString(),
    ...over,
  };
}

/** Pending approvals, newest first, the way GET /v1/approvals?status=pending answers. */
class Source {
  constructor(public items: Approval[]) {}
  load = vi.fn(async () => this.items.filter((a) => a.status === 'pending'));
  private resolve = (status: 'approved' | 'denied') => async (id: string, o: { resolvedBy: string }) => {
    const a = this.items.find((x) => x.id === id)!;
    Object.assign(a, { status, resolvedBy: o.resolvedBy });
    return { approval: a };
  };
  approve = vi.fn(this.resolve('approved'));
  deny = vi.fn(this.resolve('denied'));
}

let screens: Array<{ unmount(): void }> = [];
afterEach(() => {
  for (const s of screens) s.unmount();
  screens = [];
});

function show(source: Source) {
  const screen = render(createElement(ApprovalsScreen, { load: source.load, approve: source.approve, deny: source.deny, resolvedBy: 'alice' }));
  screens.push(screen);
  return screen;
}


/** The line the selection marker is on. */
const selectedLine = (frame: string) => frame.split('\n').find((l) => l.includes('›')) ?? '';

const press = async (stdin: { write(s: string): void }, key: string) => {
  stdin.write(key);
  await new Promise((r) => setTimeout(r, 30));
};

describe('the approvals screen', () => {
  it('lists each pending approval with its agent, capability, exact amount and currency, the matched rule and its age', async () => {
    const source = new Source([approval(1)]);
    const { lastFrame } = show(source);
    const frame = await until(lastFrame, (f) => f.includes('apr_1'));
    expect(frame).toContain('Pending approvals (1)');
    expect(frame).toContain('agent-1');
    expect(frame).toContain('cap_1');
    expect(frame).toContain('2501 USD minor units');
    expect(frame).toContain('rule: price > 2000 (pol_hold)');
    expect(frame).toMatch(/\b[5-7]s ago/);
    expect(frame).toContain('a approve');
  });

  it('shows an approval held after it opened within a second, keeping the selection on the same approval', async () => {
    const source = new Source([approval(1)]);
    const { lastFrame } = show(source);
    await until(lastFrame, (f) => f.includes('apr_1'));
    expect(selectedLine(lastFrame()!)).toContain('agent-1');

    const heldAt = Date.now();
    source.items.unshift(approval(2, { createdAt: new Date().toISOString() })); // newest first
    const frame = await until(lastFrame, (f) => f.includes('apr_2'), 1000);
    expect(Date.now() - heldAt).toBeLessThan(1000);
    expect(frame).toContain('Pending approvals (2)');
    expect(frame.indexOf('apr_2')).toBeLessThan(frame.indexOf('apr_1'));
    // the new one arrived above it; the selection stayed with agent-1
    expect(selectedLine(frame)).toContain('agent-1');
  });

  it('moves the selection with the down and up arrows and with j/k, stopping at the ends', async () => {
    const source = new Source([approval(2), approval(1)]);
    const { lastFrame, stdin } = show(source);
    const selects = (agent: string) => until(lastFrame, (f) => selectedLine(f).includes(agent));
    await selects('agent-2');
    await press(stdin, DOWN);
    await selects('agent-1');
    await press(stdin, DOWN);
    expect(selectedLine(lastFrame()!)).toContain('agent-1');
    await press(stdin, UP);
    await selects('agent-2');
    await press(stdin, 'j');
    await selects('agent-1');
    await press(stdin, 'k');
    await selects('agent-2');
  });

  it('approves the selected approval after a then y, sending the id and resolvedBy, and drops it from the list', async () => {
    const source = new Source([approval(2), approval(1)]);
    const { lastFrame, stdin } = show(source);
    await until(lastFrame, (f) => f.includes('apr_1'));
    await press(stdin, DOWN);
    await until(lastFrame, (f) => selectedLine(f).includes('agent-1'));
    await press(stdin, 'a');
    await until(lastFrame, (f) => f.includes('Approve apr_1: 2501 USD minor units for cap_1 by agent-1? (y/n)'));
    expect(source.approve).not.toHaveBeenCalled();

    await press(stdin, 'y');
    const frame = await until(lastFrame, (f) => f.includes('approved apr_1'));
    expect(source.approve).toHaveBeenCalledTimes(1);
    expect(source.approve).toHaveBeenCalledWith('apr_1', { resolvedBy: 'alice' });
    expect(source.deny).not.toHaveBeenCalled();
    expect(frame).toContain('Pending approvals (1)');
    expect(frame).not.toContain('agent-1');
    expect(selectedLine(frame)).toContain('agent-2');
  });

  it('cancels a denial on n: nothing is sent and the approval stays', async () => {
    const source = new Source([approval(1)]);
    const { lastFrame, stdin } = show(source);
    await until(lastFrame, (f) => f.includes('apr_1'));
    await press(stdin, 'd');
    await until(lastFrame, (f) => f.includes('Deny apr_1: 2501 USD minor units for cap_1 by agent-1? (y/n)'));
    await press(stdin, 'n');
    // a poll later (a load after the answer, and the frame it drew), still there and nothing was decided
    const loads = source.load.mock.calls.length;
    await until(lastFrame, (f) => f.includes('cancelled'));
    await waitUntil(() => source.load.mock.calls.length > loads, 'the next poll of the approvals');
    await new Promise((r) => setImmediate(r));
    const frame = lastFrame()!;
    expect(frame).toContain('cancelled');
    expect(frame).toContain('apr_1');
    expect(frame).not.toContain('(y/n)');
    expect(source.deny).not.toHaveBeenCalled();
    expect(source.approve).not.toHaveBeenCalled();
  });

  it('keeps the approval and says why when a decision fails', async () => {
    const source = new Source([approval(1)]);
    source.deny.mockRejectedValueOnce(new Error('approval apr_1 is already approved'));
    const { lastFrame, stdin } = show(source);
    await until(lastFrame, (f) => f.includes('apr_1'));
    await press(stdin, 'd');
    await until(lastFrame, (f) => f.includes('(y/n)'));
    await press(stdin, 'y');
    const frame = await until(lastFrame, (f) => f.includes('already approved'));
    expect(source.deny).toHaveBeenCalledWith('apr_1', { resolvedBy: 'alice' });
    expect(frame).toContain('agent-1');
  });

  it('says how to get approvals when there are none, and reports a failed refresh without losing the list', async () => {
    const source = new Source([]);
    const { lastFrame } = show(source);
    await until(lastFrame, (f) => f.includes('no pending approvals'));
    source.items.push(approval(1));
    await until(lastFrame, (f) => f.includes('apr_1'));
    source.load.mockRejectedValueOnce(new Error('cannot reach the gateway'));
    const frame = await until(lastFrame, (f) => f.includes('cannot refresh: cannot reach the gateway'));
    expect(frame).toContain('apr_1');
  });
});
