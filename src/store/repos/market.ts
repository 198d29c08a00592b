import type { capabilities, capabilityVersions, verificationRequests, ratings } from '../schema/index.js';

export type Capability = typeof capabilities.$inferSelect;
export type CapabilityVersion = typeof capabilityVersions.$inferSelect;
export type VerificationRequest = typeof verificationRequests.$inferSelect;
export type Rating = typeof ratings.$inferSelect;

/** Narrows discovery candidates; a latency ceiling leaves out capabilities that advertise none. */
export interface DiscoverableFilter {
  ids?: string[];
  category?: string;
  protocol?: Capability['protocol'];
  maxPriceMinor?: bigint;
  /** whole milliseconds */
  maxLatencyMs?: number;
}
