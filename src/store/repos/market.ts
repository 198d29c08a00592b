import type { capabilities, capabilityVersions, verificationRequests, ratings } from '../schema/index.js';

export type Capability = typeof capabilities.$inferSelect;
export type CapabilityVersion = typeof capabilityVersions.$inferSelect;
export type VerificationRequest = typeof verificationRequests.$inferSelect;
export type Rating = typeof ratings.$inferSelect;

export interface CapabilityRepo {
  insert(c: Capability): Promise<void>;
  get(id: string): Promise<Capability | undefined>;
  update(id: string, patch: Partial<Omit<Capability, 'id' | 'providerId' | 'protocol' | 'toolName' | 'createdAt'>>): Promise<void>;
  listByProvider(providerId: string): Promise<Capability[]>;
  /** active capabilities of verified, active providers, narrowed by the filter, ordered by id */
  listDiscoverable(filter?: DiscoverableFilter): Promise<Capability[]>;
}

/** Narrows discovery candidates; a latency ceiling leaves out capabilities that advertise none. */
export interface DiscoverableFilter {
  ids?: string[];
  category?: string;
  protocol?: Capability['protocol'];
  maxPriceMinor?: bigint;
  /** whole milliseconds */
  maxLatencyMs?: number;
}

export interface CapabilityVersionRepo {
  insert(v: CapabilityVersion): Promise<void>;
  get(id: string): Promise<CapabilityVersion | undefined>;
  getMany(ids: string[]): Promise<CapabilityVersion[]>;
  listByCapability(capabilityId: string): Promise<CapabilityVersion[]>;
}

/** Full-text index over name, description, tags and category. */
export interface CapabilitySearchRepo {
  upsert(doc: { capabilityId: string; name: string; description: string; tags: string[]; category: string }): Promise<void>;
  remove(capabilityId: string): Promise<void>;
  /**
   * The best `limit` matches for a free-text query among the listings discovery may show (active,
   * of a verified active seller, passing `filter`), best first; `rank` is BM25 (lower is better, as
   * SQLite reports it)
   */
  match(query: string, limit: number, filter?: Omit<DiscoverableFilter, 'ids'>): Promise<{ capabilityId: string; rank: number }[]>;
}

export interface VerificationRequestRepo {
  insert(v: VerificationRequest): Promise<void>;
  latestForProvider(providerId: string): Promise<VerificationRequest | undefined>;
  update(id: string, patch: Partial<Omit<VerificationRequest, 'id' | 'providerId'>>): Promise<void>;
  listByStatus(status: VerificationRequest['status']): Promise<VerificationRequest[]>;
}

export interface RatingRepo {
  insert(r: Rating): Promise<void>;
  byTransaction(transactionId: string): Promise<Rating | undefined>;
  /** count and sum of ratings per provider */
  summary(providerIds: string[]): Promise<Map<string, { count: number; sum: number }>>;
}
