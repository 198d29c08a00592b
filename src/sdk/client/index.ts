/**
 * `agentpay/client`: a typed client for every route of the gateway.
 *
 *   const ap = new AgentpayClient({ baseUrl, apiKey, ca });
 *   const wallet = await ap.wallets.create({ ownerType: 'agent', ownerId: 'researcher', publicKeyPem });
 */
import { HttpClient, type ClientOptions } from './http.js';
import { WalletsApi } from './wallets.js';
import { PlatformApi } from './platform.js';

export class AgentpayClient {
  readonly http: HttpClient;
  readonly wallets: WalletsApi;
  readonly platform: PlatformApi;

  constructor(opts: ClientOptions) {
    this.http = new HttpClient(opts);
    this.wallets = new WalletsApi(this.http);
    this.platform = new PlatformApi(this.http);
  }
}

export { HttpClient, toError, type ClientOptions, type RawResponse, type RequestOptions } from './http.js';
export { AgentpayError } from '../errors.js';
export type * from '../types.js';
