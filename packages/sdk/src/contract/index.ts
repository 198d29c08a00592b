/**
 * The contract: what goes over the wire, defined once. TypeBox schemas of every API resource and
 * the error envelope, the capability address rules, and the canonical JSON that signatures cover.
 * Imports nothing else of agentpay, so the gateway, the SDK, the CLI and the dashboard share it, and
 * it runs in Node, browsers and edge runtimes.
 */
export * from './schemas.js';
export * from './resources.js';
export * from './address.js';
export * from './canonical-json.js';
export * from './ed25519-strict.js';
export * from './payment.js';
export * from './bazaar.js';
export * from './tenancy.js';
export * from './market.js';
export * from './policies.js';
export * from './platform.js';
export * from './header.js';
export * from './checks.js';
export * from './base64.js';
export * from './rails.js';
export * from './payout-states.js';
export * from './errors.js';
export * from './webhooks.js';
export * from './x402.js';
export * from './wallets.js';
export * from './sessions.js';
