export * from './tenancy.js';
export * from './wallets.js';
export * from './platform.js';
export * from './market.js';
export * from './payments.js';
export * from './policies.js';
export * from './rails.js';
export * from './webhooks.js';
