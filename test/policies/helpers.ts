/**
 * Helpers for the policy tests: the fixture documents, sellers with capabilities of a
 * chosen price, category, tags and protocol (published through the API), purchases
 * driven the way the seller middleware drives them, and a held approval for the
 * tenancy matrix.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { AgentpayClient, PublishCapabilityInput } from '../../packages/sdk/src/client/index.js';
import { AgentpayError } from '../../packages/sdk/src/errors.js';
import type { TestGateway } from '../helpers/gateway.js';
import { authorizeCall, hashOf, newBuyer, type Buyer } from '../payments/helpers.js';

export const FIXTURE_NAMES = ['approval-over-500.policy', 'deny-categories.policy', 'budget.policy', 'allow-rest-only.policy', 'research-team.policy'] as const;

export function policyFixture(name: (typeof FIXTURE_NAMES)[number]): string {
  return readFileSync(new URL(`../../fixtures/policies/${name}`, import.meta.url), 'utf8');
}

export interface Seller {
  id: string;
  client: AgentpayClient;
  publish(opts?: { priceMinor?: string; category?: string; tags?: string[]; protocol?: 'rest' | 'mcp' }): Promise<string>;
}

/** A fresh verified seller that publishes capabilities through the API. */
export async function newSeller(t: TestGateway): Promise<Seller> {
  const s = await t.newProvider({ name: 'Policy Seller' });
  return {
    id: s.id,
    client: s.client,
    async publish({ priceMinor = '100', category = 'research', tags = [], protocol = 'rest' } = {}) {
      const input: PublishCapabilityInput = {
        name: `${category} ${priceMinor}`, description: 'a capability for policy tests', protocol, priceMinor, category, tags,
        endpoint: 'https://seller.example/thing', ...(protocol === 'mcp' ? { toolName: 'thing' } : {}),
      };
      return (await s.client.capabilities.publish(input)).capability.id;
    },
  };
}

/** A fresh workspace with one funded agent wallet. */
export async function workspaceWithAgent(t: TestGateway, fundMinor = '100000') {
  const ws = await t.newWorkspace('Policy Workspace');
  const buyer = await newBuyer(t, ws.client, fundMinor);
  return { ...ws, buyer };
}

/** Authorize, then complete: a whole successful purchase; returns the transaction id. */
export async function buy(s: Seller, capabilityId: string, buyer: Buyer): Promise<string> {
  const auth = await authorizeCall(s.client, capabilityId, buyer);
  await s.client.payments.complete({ transactionId: auth.transactionId, responseHash: hashOf('{"ok":true}') });
  return auth.transactionId;
}

/** The purchase's refusal, as the seller middleware would receive it. */
export async function refusal(p: Promise<unknown>, code: string): Promise<AgentpayError> {
  const e = await p.then(() => { throw new Error(`expected ${code}, but the purchase was authorized`); }, (err: unknown) => err);
  expect(e).toBeInstanceOf(AgentpayError);
  expect((e as AgentpayError).code, (e as Error).message).toBe(code);
  return e as AgentpayError;
}

/** A pending approval of `owner`'s workspace: an "approval: always" policy holds a real purchase. */
export async function heldApproval(t: TestGateway, owner: { client: AgentpayClient }): Promise<string> {
  await owner.client.policies.apply('approval "everything":\n  always\n');
  const s = await newSeller(t);
  const capabilityId = await s.publish({ priceMinor: '10' });
  const buyer = await newBuyer(t, owner.client, '10');
  const e = await refusal(authorizeCall(s.client, capabilityId, buyer), 'APPROVAL_REQUIRED');
  return String(e.body.approvalId);
}
