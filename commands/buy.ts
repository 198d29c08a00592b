import { Args, Flags } from '@oclif/core';
import { DEFAULT_MAX_PRICE_MINOR } from 'agentpay-sdk/buyer';
import { BaseCommand } from '../src/cli/base-command.js';
import { buy, buyText, failureNote, type BuyResult } from '../src/cli/buy.js';
import { EXIT } from '../src/cli/errors/index.js';
import { askText } from '../src/cli/prompts.js';
import { startProgress } from '../src/cli/spinner.js';

export default class Buy extends BaseCommand<typeof Buy> {
  static override summary = 'Buy one call: pay a seller over HTTP 402 with an agent wallet and print the response and its receipt';
  static override description = [
    'TARGET is a capability id (its endpoint is looked up on the gateway) or the URL to call. The seller answers',
    '402 with a platform-signed price; the price is checked against --max-price (integer minor units; without it',
    `the default limit, ${DEFAULT_MAX_PRICE_MINOR} = 1.00 per call), a payment proof is signed with the agent's key (--key-file)`,
    'and the call is sent again. The receipt is verified against the platform key and the exact bytes received.',
    'A refusal (PRICE_ABOVE_CLIENT_LIMIT, INSUFFICIENT_FUNDS, POLICY_DENIED, ...) exits 1 with its code and moves no money; a seller error exits 1 after a refund.',
    'A capability id is what is paid for: a seller quoting another capability is refused (CHALLENGE_MISMATCH).',
    "An MCP capability at a URL is one call of its tool (--data: the tool's JSON arguments); an npx package",
    'capability is run by the buying agent itself (NOT_CALLABLE). With --wait-approval, a purchase a policy holds for',
    'a person (APPROVAL_REQUIRED) waits for the decision, reading the approval with the API key in use: approved, it',
    'is bought once more; denied, APPROVAL_DENIED; no decision in time, APPROVAL_REQUIRED. Each exits 1 but the first.',
    '--output FILE writes the response body byte for byte (an MCP tool: the canonical JSON its receipt covers), so',
    '`agentpay receipts verify purchase.json --response FILE` can check the response hash later.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> buy cap_123 --wallet wal_456 --key-file agent.pem --max-price 50',
    '<%= config.bin %> buy cap_123 --wallet wal_456 --key-file agent.pem --data \'{"text":"Long document..."}\'',
    '<%= config.bin %> buy "https://127.0.0.1:8443/forecast?city=Lisbon" --wallet wal_456 --key-file agent.pem --json',
    '<%= config.bin %> buy cap_789 --wallet wal_456 --key-file agent.pem --data \'{"text":"Agents pay per call."}\'',
    '<%= config.bin %> buy cap_123 --wallet wal_456 --key-file agent.pem --wait-approval 600',
    '<%= config.bin %> buy cap_123 --wallet wal_456 --key-file agent.pem --output response.bin --json > purchase.json',
  ];
  static override args = { target: Args.string({ description: 'capability id (cap_…) or URL', required: true }) };
  static override flags = {
    wallet: Flags.string({ description: 'the agent wallet that pays (env AGENTPAY_WALLET_ID)', env: 'AGENTPAY_WALLET_ID' }),
    'key-file': Flags.string({ description: "the agent's ed25519 private key (PEM) registered on the wallet (env AGENTPAY_PRIVATE_KEY_FILE)", env: 'AGENTPAY_PRIVATE_KEY_FILE' }),
    'max-price': Flags.string({ description: `refuse to pay more than this per call, in integer minor units (150 = 1.50) [default: ${DEFAULT_MAX_PRICE_MINOR}]` }),
    method: Flags.string({ description: 'HTTP method [default: POST with a body, else GET]; not for an MCP tool' }),
    data: Flags.string({ description: "request body (JSON unless --header sets content-type); an MCP tool's arguments (a JSON object)", exclusive: ['data-file'] }),
    'data-file': Flags.string({ description: 'file holding the request body', exclusive: ['data'] }),
    header: Flags.string({ description: 'extra request header "name: value" (repeatable)', multiple: true }),
    output: Flags.string({ description: 'write the response body, exactly the bytes received, to this file (for receipts verify --response FILE)' }),
    'wait-approval': Flags.integer({ description: 'if a policy holds the purchase for a person, wait this many seconds for the decision (needs approvals:read)', min: 1 }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const walletId = await askText({ flag: '--wallet', message: 'Agent wallet id that pays', value: f.wallet });
    const keyFile = await askText({ flag: '--key-file', message: "Path of the agent's private key (PEM)", value: f['key-file'] });
    const progress = startProgress(`buying ${this.args.target}`);
    let result: BuyResult;
    try {
      result = await buy(this.connection(), () => this.client(), {
        target: this.args.target,
        walletId,
        keyFile,
        maxPrice: f['max-price'],
        method: f.method,
        data: f.data,
        dataFile: f['data-file'],
        headers: f.header,
        output: f.output,
        onProgress: (step) => progress.update(step),
        ...(f['wait-approval'] !== undefined ? {
          waitApproval: {
            timeoutMs: f['wait-approval'] * 1000,
            onPending: (approvalId: string) => {
              const text = `held for a person: approval ${approvalId} (agentpay approvals approve ${approvalId}); waiting up to ${f['wait-approval']} s for the decision`;
              // the spinner shows it on a terminal; a script reads the id on stderr
              if (process.stderr.isTTY) progress.update(text);
              else this.out.note(text);
            },
          },
        } : {}),
      });
    } finally {
      progress.stop();
    }
    this.out.result(result, () => buyText(result));
    const failed = failureNote(result);
    if (failed) {
      this.out.note(failed);
      this.exit(EXIT.REFUSED);
    }
  }
}
