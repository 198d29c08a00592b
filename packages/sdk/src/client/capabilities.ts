import type { HttpClient } from './http.js';
import type { Capability, CapabilityDetail, CapabilityEdit, CapabilityPatch, PublishCapabilityInput, PublishedCapability } from '../types.js';

const path = (id: string) => `/v1/capabilities/${encodeURIComponent(id)}`;

/** A seller's capabilities (provider key), and any capability by id. */
export class CapabilitiesApi {
  constructor(private http: HttpClient) {}

  /** Publishes a new capability (a second publish makes a second capability). */
  publish(input: PublishCapabilityInput): Promise<PublishedCapability> {
    return this.http.request('POST', '/v1/capabilities', { body: input });
  }
  /** The caller's own capabilities, deprecated ones included. Provider keys only. */
  async list(): Promise<PublishedCapability[]> {
    return (await this.http.request<{ capabilities: PublishedCapability[] }>('GET', '/v1/capabilities')).capabilities;
  }
  get(id: string): Promise<CapabilityDetail> {
    return this.http.request('GET', path(id));
  }
  /** Send only what changes; a schema change publishes a new version. */
  edit(id: string, patch: CapabilityPatch): Promise<CapabilityEdit> {
    return this.http.request('POST', path(id), { body: patch });
  }
  async deprecate(id: string): Promise<Capability> {
    return (await this.http.request<{ capability: Capability }>('POST', `${path(id)}/deprecate`)).capability;
  }
}
