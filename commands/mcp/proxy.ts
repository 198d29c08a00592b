import { Errors, Flags } from '@oclif/core';
import { DEFAULT_MAX_PRICE_MINOR } from 'agentpay-sdk/buyer';
import { BaseCommand } from '../../src/cli/base-command.js';
import { describeError } from '../../src/cli/errors/index.js';
import { runProxy } from '../../src/cli/mcp-proxy.js';

export default class McpProxy extends BaseCommand<typeof McpProxy> {
  static override summary = "Run a stdio MCP server behind a proxy that pays its paid tools with an agent wallet";
  static override description = [
    'For MCP hosts that launch servers over stdio (desktop apps, IDEs, agent frameworks): the host runs this command,',
    'and this command runs the MCP server given after --. Everything passes through unchanged (tools, resources,',
    "prompts, notifications), except that a paid tool's price is checked (--max-price; without it the default limit,",
    `${DEFAULT_MAX_PRICE_MINOR} = 1.00 per call, and the capability the tool advertises), paid with the wallet's key, and its`,
    'receipt verified before the result reaches the host. A refusal (PRICE_ABOVE_CLIENT_LIMIT, INSUFFICIENT_FUNDS,',
    'POLICY_DENIED, ...) reaches the host as a tool error naming the code and what to do; nothing is paid.',
    '',
    'stdout carries only MCP messages; the start line, each payment and errors go to stderr (the host\'s log of the',
    'server). The server inherits the environment minus the AGENTPAY_* variables and writes its stderr to ours.',
    'The gateway and its CA come from --base-url/--ca, the environment (AGENTPAY_BASE_URL, AGENTPAY_CA), a saved',
    'profile or ./.agentpay, as for every command; no API key is needed. The wallet is configured once, in the',
    "host's config:",
    '',
    '{"mcpServers": {"weather": {',
    '"command": "agentpay",',
    '"args": ["mcp", "proxy", "--wallet", "wal_…", "--key-file", "/home/me/agent.pem", "--", "npx", "-y", "weather-mcp@1.2.3"],',
    '"env": {"AGENTPAY_BASE_URL": "https://gateway.example", "AGENTPAY_CA": "/home/me/agentpay-ca.pem"}}}}',
    '',
    '(Claude Desktop: claude_desktop_config.json; other hosts take the same command, args and env; see docs/cli.md,',
    '"agentpay mcp proxy".) Instead of flags, AGENTPAY_WALLET_ID, AGENTPAY_PRIVATE_KEY_FILE and AGENTPAY_MAX_PRICE may be set in "env".',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> mcp proxy --wallet wal_456 --key-file agent.pem -- npx -y weather-mcp@1.2.3',
    '<%= config.bin %> mcp proxy --wallet wal_456 --key-file agent.pem --max-price 500 -- node ./server.js',
  ];
  // the server's command and its arguments, after --
  static override strict = false;
  static override flags = {
    wallet: Flags.string({ description: 'the agent wallet that pays', env: 'AGENTPAY_WALLET_ID', required: true }),
    'key-file': Flags.string({ description: "the agent's ed25519 private key (PEM) registered on the wallet", env: 'AGENTPAY_PRIVATE_KEY_FILE', required: true }),
    'max-price': Flags.string({ description: `refuse to pay more than this per call, in integer minor units (150 = 1.50) [default: ${DEFAULT_MAX_PRICE_MINOR}]`, env: 'AGENTPAY_MAX_PRICE' }),
    timeout: Flags.integer({ description: 'time limit of one tool call, in seconds (keep it above the seller\'s handler limit, 30 s by default)', default: 120, min: 1 }),
  };

  async run(): Promise<void> {
    const { argv } = await this.parse(McpProxy);
    const dashes = this.argv.indexOf('--');
    const server = dashes >= 0 ? this.argv.slice(dashes + 1) : (argv as string[]);
    const code = await runProxy(this.connection(), {
      walletId: this.flags.wallet,
      keyFile: this.flags['key-file'],
      maxPrice: this.flags['max-price'],
      server,
      timeoutMs: this.flags.timeout * 1000,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    this.exit(code);
  }

  /** stdout is the MCP channel: a failure is told on stderr only, never as an envelope on stdout. */
  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    if (err instanceof Errors.ExitError) throw err;
    const givenFlags = Object.entries((this.flags ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k]) => k);
    const report = describeError(err, {
      command: 'agentpay mcp proxy',
      givenFlags,
      commandFlags: Object.keys(McpProxy.flags),
      knownFlags: Object.keys({ ...McpProxy.baseFlags, ...McpProxy.flags }),
      envFlags: this.flagsFromEnv(),
    });
    const lines = [`error ${report.code}: ${report.message}`];
    if (report.tryNext) lines.push(`Try: ${report.tryNext}`);
    if (report.bug) lines.push(err.stack ?? String(err));
    process.stderr.write(lines.join('\n') + '\n');
    return this.exit(report.exit);
  }
}
