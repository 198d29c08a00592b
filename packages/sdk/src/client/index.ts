/**
 * `agentpay-sdk/client`: a typed client for every route of the gateway.
 *
 *   const ap = new AgentpayClient({ gatewayUrl, apiKey, ca });   // or new AgentpayClient(): from AGENTPAY_* (../settings.ts)
 *   const wallet = await ap.wallets.create({ ownerType: 'agent', ownerId: 'researcher', publicKeyPem });
 */
import { HttpClient, type ClientOptions } from './http.js';
import { WalletsApi } from './wallets.js';
import { PlatformApi } from './platform.js';
import { PaymentsApi } from './payments.js';
import { SessionsApi } from './sessions.js';
import { ReceiptsApi } from './receipts.js';
import { RatingsApi } from './ratings.js';
import { CapabilitiesApi } from './capabilities.js';
import { ProvidersApi } from './providers.js';
import { DiscoveryApi } from './discovery.js';
import { SignupApi } from './signup.js';
import { AccountsApi } from './accounts.js';
import { AuthApi } from './auth.js';
import { KeysApi } from './keys.js';
import { PoliciesApi } from './policies.js';
import { ApprovalsApi } from './approvals.js';
import { RailApi, SandboxApi } from './rails.js';
import { PayoutsApi } from './payouts.js';
import { WebhooksApi } from './webhooks.js';

export class AgentpayClient {
  readonly http: HttpClient;
  readonly wallets: WalletsApi;
  readonly platform: PlatformApi;
  readonly payments: PaymentsApi;
  readonly sessions: SessionsApi;
  readonly receipts: ReceiptsApi;
  readonly ratings: RatingsApi;
  readonly capabilities: CapabilitiesApi;
  readonly providers: ProvidersApi;
  readonly discovery: DiscoveryApi;
  readonly signup: SignupApi;
  readonly accounts: AccountsApi;
  readonly auth: AuthApi;
  readonly keys: KeysApi;
  readonly policies: PoliciesApi;
  readonly approvals: ApprovalsApi;
  readonly rail: RailApi;
  readonly sandbox: SandboxApi;
  readonly payouts: PayoutsApi;
  readonly webhooks: WebhooksApi;

  /** Options not given are read from the environment: AGENTPAY_GATEWAY_URL, AGENTPAY_API_KEY, AGENTPAY_CA (docs/configuration.md). */
  constructor(opts: ClientOptions = {}) {
    this.http = new HttpClient(opts);
    this.wallets = new WalletsApi(this.http);
    this.platform = new PlatformApi(this.http);
    this.payments = new PaymentsApi(this.http);
    this.sessions = new SessionsApi(this.http);
    this.receipts = new ReceiptsApi(this.http);
    this.ratings = new RatingsApi(this.http);
    this.capabilities = new CapabilitiesApi(this.http);
    this.providers = new ProvidersApi(this.http);
    this.discovery = new DiscoveryApi(this.http);
    this.signup = new SignupApi(this.http);
    this.accounts = new AccountsApi(this.http);
    this.auth = new AuthApi(this.http);
    this.keys = new KeysApi(this.http);
    this.policies = new PoliciesApi(this.http);
    this.approvals = new ApprovalsApi(this.http);
    this.rail = new RailApi(this.http);
    this.sandbox = new SandboxApi(this.http);
    this.payouts = new PayoutsApi(this.http);
    this.webhooks = new WebhooksApi(this.http);
  }

  /** Closes the client's connections after the requests under way (HttpClient.close): a script ends when its work does. */
  close(): Promise<void> {
    return this.http.close();
  }
}

export { HttpClient, toError, type ClientOptions, type RawResponse, type RequestOptions } from './http.js';
export { AgentpayError } from '../errors.js';
export type * from '../types.js';
export type * from './rails.js';
export type * from './payouts.js';
export type * from './webhooks.js';
