import { render } from 'ink-testing-library';
import { createElement } from 'react';
import { it } from 'vitest';
import { ApprovalsScreen } from '../../src/cli/ui/approvals-screen.js';
const a = { id: 'apr_1', agentId: 'agent-1', walletId: 'w', capabilityId: 'cap_1', amountMinor: '1', currency: 'USD', rule: 'r', policyId: 'p', status: 'pending', createdAt: new Date().toISOString() } as any;
it('dbg', async () => {
  const s = render(createElement(ApprovalsScreen, { load: async () => [a], approve: async () => ({}), deny: async () => ({}), resolvedBy: 'x' }));
  const t0 = Date.now();
  while (!(s.lastFrame() ?? '').includes('apr_1')) await new Promise((r) => setTimeout(r, 10));
  console.log('shown at', Date.now() - t0, s.frames.length);
  s.stdin.write('d');
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 50));
    if ((s.lastFrame() ?? '').includes('Deny')) { console.log('deny shown after', (i + 1) * 50); break; }
  }
  console.log(JSON.stringify(s.lastFrame()));
});
