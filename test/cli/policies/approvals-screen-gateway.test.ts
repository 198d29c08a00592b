/**
 * The live approvals screen wired the way `agentpay approvals` wires it (the load and
 * decide functions of src/cli/approvals.ts over a real client), against a real HTTPS
 * gateway: a purchase held while the screen is open appears within a second, a keypress
 * approves it, and the one purchase it covers then pays.
 */
import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { decide, pendingApprovals } from '../../../src/cli/approvals.js';
import { ApprovalsScreen } from '../../../src/cli/ui/approvals-screen.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { authorizeCall, expectLedgerConsistent, ledgerBalance, newBuyer } from '../../payments/helpers.js';
import { buy, newSeller, refusal } from '../../policies/helpers.js';
import { until } from './until-frame.js';

let t: TestGateway;
let ws: { id: string; apiKey: string; client: AgentpayClient };
let screen: ReturnType<typeof render> | undefined;

beforeAll(async () => {
  t = await startTestGateway();
  ws = await t.newWorkspace('Screen Approvals');
  await ws.client.policies.apply('approval "over 500":\n  price > 500\n');
});
afterEach(() => {
  screen?.unmount();
  screen = undefined;
});
afterAll(() => t.close());


const press = async (stdin: { write(s: string): void }, key: string) => {
  stdin.write(key);
  await new Promise((r) => setTimeout(r, 30));
};

describe('agentpay approvals, live against a gateway', () => {
  it('shows a purchase held while it is open within a second, approves it on a then y, and the retry pays', async () => {
    const client = ws.client;
    screen = render(createElement(ApprovalsScreen, {
      load: () => pendingApprovals(client),
      approve: (id: string, o: { resolvedBy: string }) => decide(client, id, 'approve', o.resolvedBy),
      deny: (id: string, o: { resolvedBy: string }) => decide(client, id, 'deny', o.resolvedBy),
      resolvedBy: 'alice',
    }));
    const { lastFrame, stdin } = screen;
    await until(lastFrame, (f) => f.includes('no pending approvals'));

    // an agent's purchase is held by the rule while the screen is open
    const s = await newSeller(t);
    const cap = await s.publish({ priceMinor: '600' });
    const buyer = await newBuyer(t, ws.client, '1000');
    const approvalId = String((await refusal(authorizeCall(s.client, cap, buyer), 'APPROVAL_REQUIRED')).body.approvalId);
    const heldAt = Date.now();
    const frame = await until(lastFrame, (f) => f.includes(approvalId), 1000);
    expect(Date.now() - heldAt).toBeLessThan(1000);
    expect(frame).toContain('Pending approvals (1)');
    expect(frame).toContain('600 USD minor units');
    expect(frame).toContain('rule: price > 500');

    await press(stdin, 'a');
    await until(lastFrame, (f) => f.includes(`Approve ${approvalId}: 600 USD minor units for ${cap}`));
    await press(stdin, 'y');
    await until(lastFrame, (f) => f.includes(`approved ${approvalId} as alice`));
    await until(lastFrame, (f) => f.includes('Pending approvals (0)'));
    expect((await ws.client.approvals.get(approvalId)).approval).toMatchObject({ status: 'approved', resolvedBy: 'alice' });

    // the approval covers exactly the retried purchase
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 1000n, held: 0n });
    await buy(s, cap, buyer);
    expect(ledgerBalance(t, buyer.walletId)).toEqual({ balance: 400n, held: 0n });
    expectLedgerConsistent(t);
  });
});
