/**
 * The `agentpay approvals` commands' work: who decides, the decisions themselves, and
 * how a person sees approvals. Amounts stay the gateway's exact strings of minor units.
 */
import { userInfo } from 'node:os';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Approval } from 'agentpay-sdk/types';
import { usageError } from './errors/index.js';
import { moneyText, renderFields, renderTable } from './output.js';

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied'] as const;
export type Decision = 'approve' | 'deny';

/** --resolved-by, else the OS user name: the record says which person decided. */
export function resolvedByName(flag: string | undefined): string {
  if (flag !== undefined) {
    if (!flag.trim()) throw usageError('--resolved-by: give a name, e.g. --resolved-by alice');
    return flag;
  }
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry for this uid (some containers): fall back to the environment
    name = process.env.USER ?? process.env.USERNAME ?? process.env.LOGNAME;
  }
  if (!name) throw usageError('cannot tell who is deciding (no OS user name)', 'pass --resolved-by NAME', { flag: '--resolved-by' });
  return name;
}

export async function pendingApprovals(client: AgentpayClient): Promise<Approval[]> {
  return (await client.approvals.list({ status: 'pending' })).approvals;
}

export async function decide(client: AgentpayClient, id: string, decision: Decision, resolvedBy: string): Promise<Approval> {
  const res = decision === 'approve' ? await client.approvals.approve(id, { resolvedBy }) : await client.approvals.deny(id, { resolvedBy });
  return res.approval;
}

// ---- how a person sees approvals ----

/** The exact amount, e.g. "250 USD minor units" (250 is 2.50 USD). */
export const amountText = (a: Pick<Approval, 'amountMinor' | 'currency'>) => `${a.amountMinor} ${a.currency} minor units`;

/** How long ago, coarsely: "42s", "5m", "3h", "2d". */
export function ageText(createdAt: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(createdAt)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

export function approvalTable(approvals: readonly Approval[], empty = '(no approvals)'): string {
  return renderTable(approvals, [
    { header: 'ID', get: (a) => a.id },
    { header: 'STATUS', get: (a) => a.status },
    { header: 'AGENT', get: (a) => a.agentId },
    { header: 'CAPABILITY', get: (a) => a.capabilityId },
    { header: 'AMOUNT', get: (a) => moneyText(a.amountMinor, a.currency) },
    { header: 'CREATED', get: (a) => a.createdAt },
    { header: 'RESOLVED BY', get: (a) => a.resolvedBy },
    { header: 'RULE', get: (a) => a.rule },
  ], empty);
}

export function approvalFields(a: Approval): string {
  return renderFields([
    ['id', a.id],
    ['status', a.status],
    ['agent', a.agentId],
    ['wallet', a.walletId],
    ['capability', a.capabilityId],
    ['amount', amountText(a)],
    ['rule', a.rule],
    ['policy', a.policyId],
    ['created', a.createdAt],
    ['resolved by', a.resolvedBy],
    ['resolved', a.resolvedAt],
    ['used', a.usedAt],
  ]);
}
