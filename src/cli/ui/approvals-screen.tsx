/**
 * `agentpay approvals`: the pending approvals as a live list. Purchases held by a rule
 * appear within a poll; a person moves to one, presses `a` or `d`, confirms, and the
 * decision is sent with their name. Data and decisions come in as props (async
 * functions), so the screen is tested without a gateway.
 */
import { Text } from 'ink';
import type { ReactNode } from 'react';
import type { Approval } from 'agentpay-sdk/types';
import { amountText, ageText } from '../approvals.js';
import { LiveList, type LiveAction } from './live-list.js';

export interface ApprovalsScreenProps {
  /** the pending approvals, newest first */
  load: () => Promise<readonly Approval[]>;
  approve: (id: string, opts: { resolvedBy: string }) => Promise<unknown>;
  deny: (id: string, opts: { resolvedBy: string }) => Promise<unknown>;
  /** who decides, sent with every decision */
  resolvedBy: string;
  initial?: readonly Approval[];
  intervalMs?: number;
  /** the time ages are measured to (ms) */
  now?: () => number;
  errorText?: (err: unknown) => string;
}

export function ApprovalsScreen(props: ApprovalsScreenProps): ReactNode {
  const now = props.now ?? Date.now;
  const by = { resolvedBy: props.resolvedBy };
  const actions: LiveAction<Approval>[] = [
    {
      key: 'a',
      label: 'approve',
      question: (a) => `Approve ${a.id}: ${amountText(a)} for ${a.capabilityId} by ${a.agentId}?`,
      run: async (a) => void (await props.approve(a.id, by)),
      done: (a) => `approved ${a.id} as ${props.resolvedBy}: the agent's next purchase of ${a.capabilityId} up to ${amountText(a)} goes through`,
    },
    {
      key: 'd',
      label: 'deny',
      question: (a) => `Deny ${a.id}: ${amountText(a)} for ${a.capabilityId} by ${a.agentId}?`,
      run: async (a) => void (await props.deny(a.id, by)),
      done: (a) => `denied ${a.id} as ${props.resolvedBy}`,
    },
  ];
  return (
    <LiveList<Approval>
      title="Pending approvals"
      load={props.load}
      keyOf={(a) => a.id}
      actions={actions}
      empty="(no pending approvals; purchases held by a rule appear here)"
      renderItem={(a, selected) => (
        <>
          <Text bold={selected}>
            {a.agentId}  {a.capabilityId}  {amountText(a)}  {ageText(a.createdAt, now())} ago  <Text dimColor>{a.id}</Text>
          </Text>
          <Text dimColor>
            {'  '}rule: {a.rule} ({a.policyId}) · wallet {a.walletId}
          </Text>
        </>
      )}
      initial={props.initial}
      intervalMs={props.intervalMs}
      errorText={props.errorText}
    />
  );
}
