import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { readCa, requireApiKey, requireBaseUrl, resolveConnection, type Connection, type ConnectionFlags } from '../src/cli/client.js';
import { DEFAULT_LISTEN, runPaywall } from '../src/cli/paywall/run.js';

export default class PaywallProxy extends BaseCommand<typeof PaywallProxy> {
  static override summary = 'Put a paywall in front of an existing HTTP API: unpaid calls get 402, paid ones are forwarded';
  static override description = [
    'A reverse proxy that sells calls to the API at --upstream, with no change to it. A request of a sold route',
    'without payment is answered 402 with a signed price challenge (in the agentpay, x402 and Payment-scheme',
    'dialects); a paid one is forwarded with its method, path, query, headers and body as received (minus',
    'hop-by-hop and payment headers), and the upstream\'s status, headers and body come back with the receipt.',
    'The call is charged when the upstream answers 2xx or 3xx, refunded when it answers 4xx or 5xx, cannot be',
    'reached (502) or takes longer than --timeout (504), as with the SDK\'s seller middleware.',
    '',
    '--capability CAP sells every route with that capability (its price is the one published). --config FILE',
    'sells several behind one upstream: {"upstream": URL, "routes": {"GET /forecast": "cap_…", "POST /reports/*":',
    '"cap_…", "/users/:id": "cap_…", "GET /health": "free"}, "unknownRoutes": "reject"}; the first route that',
    'matches wins; "free" routes are forwarded and streamed as they are. A route the file does not list is answered',
    '404 without reaching the upstream, unless --pass-unknown (or "unknownRoutes": "pass") forwards it free, or',
    '--capability sells it.',
    '',
    'The gateway, its CA and the provider\'s API key come from --gateway-url, --ca and --api-key, the environment',
    '(AGENTPAY_GATEWAY_URL, AGENTPAY_CA, AGENTPAY_API_KEY: eval "$(agentpay dev env --role seller)"), a profile, or',
    'the provider key of the nearest .agentpay. Every capability is checked with the gateway before listening.',
    'One line per request goes to stderr; with --json (or stdout not a terminal) one JSON line {url, upstream,',
    'gatewayUrl, routes, otherRoutes} is printed on stdout once ready. SIGINT/SIGTERM stop it after the calls in',
    'flight.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> proxy --upstream http://127.0.0.1:8080 --capability cap_123',
    '<%= config.bin %> proxy --config proxy.json --listen 0.0.0.0:8402 --public-url https://api.example.com',
    '<%= config.bin %> proxy --upstream http://127.0.0.1:8080 --config proxy.json --pass-unknown --json',
  ];
  static override flags = {
    upstream: Flags.string({ description: 'the API to put behind the paywall, http(s)://HOST:PORT[/base/path] [default: "upstream" of --config]' }),
    capability: Flags.string({ description: 'the capability that sells every route (with --config: every route the file does not list)' }),
    config: Flags.string({ description: 'JSON file of routes and their capabilities: {"upstream", "routes": {"GET /path": "cap_…" | "free"}, "unknownRoutes": "reject" | "pass"}' }),
    listen: Flags.string({ description: 'HOST:PORT to listen on (port 0: any free one)', default: DEFAULT_LISTEN }),
    'pass-unknown': Flags.boolean({ description: 'forward routes --config does not list, free (default: answer them 404)' }),
    timeout: Flags.integer({ description: 'seconds the upstream may take on a paid call; past it the buyer gets 504 and is refunded (0: no limit)', default: 30, min: 0 }),
    'public-url': Flags.string({ description: 'the base URL buyers call, for the x402 resource URL [default: http://HOST of each request]' }),
    network: Flags.string({ description: 'x402 network of the gateway: agentpay:sandbox or agentpay:live [default: agentpay:sandbox]' }),
    'cors-origin': Flags.string({ description: 'answer CORS preflights of paid routes and allow this origin (* for any)' }),
  };

  private sellerConn: Connection | undefined;

  /**
   * The proxy sells: with the key of a local dev gateway (--data-dir or the nearest .agentpay) and
   * no --as, it takes that gateway's provider key rather than the workspace's.
   */
  protected override connection(opts: { optionalProfile?: boolean } = {}): Connection {
    if (this.sellerConn) return this.sellerConn;
    const conn = super.connection(opts);
    const local = conn.sources.apiKey === 'local' || conn.sources.apiKey === 'data-dir';
    this.sellerConn = local && !this.flags.as ? resolveConnection({ ...(this.flags as ConnectionFlags), as: 'provider' }, opts) : conn;
    return this.sellerConn;
  }

  protected override apiKeyInUse(): string | undefined {
    return this.sellerConn?.apiKey ?? super.apiKeyInUse();
  }

  async run(): Promise<void> {
    const gateway = () => {
      const conn = this.connection();
      const gatewayUrl = requireBaseUrl(conn);
      const apiKey = requireApiKey(conn);
      return { gatewayUrl, apiKey, ca: conn.ca ? readCa(conn.ca, conn) : undefined };
    };
    await runPaywall(this.flags, gateway, { json: this.out.json, note: (line) => this.out.note(line) });
  }
}
