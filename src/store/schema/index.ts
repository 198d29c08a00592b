export * from './tenancy.js';
export * from './wallets.js';
export * from './platform.js';
