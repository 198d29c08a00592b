/**
 * Every table, described once (./kit.ts): src/store/schema makes the SQLite tables of these,
 * src/store/schema-pg the PostgreSQL ones, and the migrations of each come from those.
 */
export * from './tenancy.js';
export * from './wallets.js';
export * from './platform.js';
export * from './market.js';
export * from './payments.js';
export * from './policies.js';
export * from './rails.js';
export * from './webhooks.js';
export * from './alerts.js';
export * from './x402.js';
export * from './sessions.js';
