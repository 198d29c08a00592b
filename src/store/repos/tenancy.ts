import type { tenants, signups, accounts, passwordResets, apiKeys, authThrottles } from '../schema/index.js';

export type Tenant = typeof tenants.$inferSelect;
export type Signup = typeof signups.$inferSelect;
export type Account = typeof accounts.$inferSelect;
export type PasswordReset = typeof passwordResets.$inferSelect;
export type ApiKey = typeof apiKeys.$inferSelect;
export type AuthThrottle = typeof authThrottles.$inferSelect;
export type TenantKind = Tenant['kind'];
