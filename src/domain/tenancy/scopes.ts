/** Every scope of the API, and which a key of each kind gets by default. */
export const SCOPES = [
  'policies:read',
  'policies:write',
  'approvals:read',
  'approvals:write',
  'wallets:read',
  'wallets:write',
  'providers:read',
  'ratings:write',
  'payouts:write',
  'rail:read',
  'receipts:read',
  'discovery:read',
  'capabilities:read',
  'capabilities:write',
  'payments:write',
  // agentpay's own: webhook endpoints and their deliveries
  'webhooks:read',
  'webhooks:write',
  // agentpay's own: managing keys, and the operator's platform powers
  'keys:read',
  'keys:write',
  'operator',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export const DEFAULT_SCOPES: Record<'workspace' | 'provider' | 'operator', readonly Scope[]> = {
  workspace: [
    'policies:read', 'policies:write', 'approvals:read', 'approvals:write', 'wallets:read', 'wallets:write',
    'providers:read', 'ratings:write', 'rail:read', 'receipts:read', 'discovery:read', 'capabilities:read',
    'keys:read', 'keys:write', 'webhooks:read', 'webhooks:write',
  ],
  provider: [
    'wallets:read', 'wallets:write', 'providers:read', 'payouts:write', 'rail:read', 'receipts:read',
    'discovery:read', 'capabilities:read', 'capabilities:write', 'payments:write', 'keys:read', 'keys:write',
    'webhooks:read', 'webhooks:write',
  ],
  operator: SCOPES,
};

/**
 * The preset for keys handed to a buying agent: it can discover, read its wallets,
 * receipts and approvals, and rate sellers, but never approve its own held spend
 * (no approvals:write), change policies, or mint keys.
 */
export const AGENT_SCOPES: readonly Scope[] = [
  'discovery:read', 'capabilities:read', 'providers:read', 'wallets:read', 'receipts:read',
  'approvals:read', 'policies:read', 'ratings:write',
];
