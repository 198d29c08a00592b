/** The `agentpay providers` commands' work, and how a person sees sellers. */
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Provider } from 'agentpay-sdk/types';
import { usageError } from './errors/index.js';
import { renderFields, renderTable } from './output.js';
import { askChoice } from './prompts.js';

export const DECISIONS = ['approved', 'denied'] as const;
export type Decision = (typeof DECISIONS)[number];

/** The provider the key belongs to: request-verification's default. */
async function ownProviderId(client: AgentpayClient): Promise<string> {
  const me = await client.auth.whoami();
  if (me.tenant.kind !== 'provider') {
    // naming another provider would not help: the gateway takes the request only from the provider's own key
    throw usageError(
      `this key belongs to a ${me.tenant.kind}, not a provider: a provider requests its own verification, with its own key`,
      "use the provider's key: agentpay providers request-verification --as provider (a dev gateway's key, with --data-dir DIR or ./.agentpay), or --api-key PROVIDER_KEY",
    );
  }
  return me.tenant.id;
}

export async function requestVerification(client: AgentpayClient, id: string | undefined, input: { note?: string | undefined; contact?: string | undefined }): Promise<Provider> {
  const providerId = id ?? (await ownProviderId(client));
  return client.providers.requestVerification(providerId, {
    ...(input.note !== undefined ? { note: input.note } : {}),
    ...(input.contact !== undefined ? { contact: input.contact } : {}),
  });
}

export async function decideVerification(client: AgentpayClient, id: string, input: { decision?: Decision | undefined; reason?: string | undefined }): Promise<Provider> {
  const decision = await askChoice({ flag: '--decision', message: `Decision for ${id}`, value: input.decision, choices: DECISIONS });
  return client.providers.verify(id, { decision, ...(input.reason !== undefined ? { reason: input.reason } : {}) });
}

// ---- how a person sees providers ----

export function providerFields(p: Provider): string {
  const v = p.verification;
  return renderFields([
    ['id', p.id],
    ['name', p.name],
    ['status', p.status],
    ['verified', p.verified ? 'yes' : 'no'],
    ['reputation', p.reputation],
    ['website', p.website],
    ...(v === undefined
      ? []
      : v === null
        ? ([['verification', 'never requested']] as const)
        : ([
            ['verification', `${v.status} (requested ${v.requestedAt}${v.decidedAt ? `, decided ${v.decidedAt}` : ''})`],
            ['note', v.note],
            ['contact', v.contact],
            ['reason', v.reason],
          ] as const)),
  ]);
}

export function providerTable(providers: readonly Provider[]): string {
  return renderTable(providers, [
    { header: 'ID', get: (p) => p.id },
    { header: 'NAME', get: (p) => p.name },
    { header: 'STATUS', get: (p) => p.status },
    { header: 'VERIFIED', get: (p) => (p.verified ? 'yes' : 'no') },
    { header: 'REPUTATION', get: (p) => p.reputation },
    { header: 'VERIFICATION', get: (p) => p.verification?.status },
  ], '(no providers)');
}
