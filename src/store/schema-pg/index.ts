/**
 * The PostgreSQL schema: the SQLite schema (../schema) table for table, column for column, with
 * PostgreSQL's types (./columns.ts). Migrations: drizzle-pg/ (drizzle.pg.config.ts), plus the
 * hand-written ones for what the SQLite migrations do with triggers and virtual tables (the
 * append-only ledger, full-text search, insertion order).
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
