import type { policies, approvals } from '../schema/index.js';

export type Policy = typeof policies.$inferSelect;
export type Approval = typeof approvals.$inferSelect;
export type ApprovalStatus = Approval['status'];
