import { readFileSync } from 'node:fs';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { requireBaseUrl } from '../../src/cli/client.js';
import { CliError, EXIT } from '../../src/cli/errors/index.js';
import {
  fetchReceipt,
  readPublicKeyFile,
  readResponseFile,
  readStdin,
  receiptKey,
  receiptSource,
  verdictText,
  verifyReceipt,
  type VerifyInput,
} from '../../src/cli/receipts-verify.js';

export default class ReceiptsVerify extends BaseCommand<typeof ReceiptsVerify> {
  static override summary = 'Check a receipt offline: signature, key id, response hash';
  static override description = [
    'RECEIPT is a receipt JSON file, - for stdin, or a receipt id (rcp_…) fetched from the gateway. Receipt JSON,',
    "the output of `receipts show --json` or `buy --json`, and an x-service-receipt header value are all accepted.",
    'The signature is checked against the receipt key named by signingKeyId, fetched from the gateway once and then',
    'cached in the config dir, so later checks work offline (--public-key skips the gateway altogether).',
    'Exit 0 when the receipt is valid; exit 1 when it is not, with each problem listed: SIGNATURE_MISMATCH,',
    'UNKNOWN_KEY_ID, RESPONSE_HASH_MISMATCH, RESPONSE_HASH_ABSENT, RECEIPT_MALFORMED (naming the field).',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> receipts verify receipt.json --response body.json',
    '<%= config.bin %> receipts show rcp_123 --json | <%= config.bin %> receipts verify -',
    '<%= config.bin %> receipts verify rcp_123',
    '<%= config.bin %> receipts verify receipt.json --public-key receipt-key.pem',
  ];
  static override args = { receipt: Args.string({ description: 'receipt file, - for stdin, or receipt id (rcp_…)', required: true }) };
  static override flags = {
    response: Flags.string({ description: 'file holding the exact response body: checks the receipt\'s responseHash against its bytes' }),
    'public-key': Flags.string({ description: 'the receipt key (PEM) to check against, instead of fetching it from the gateway' }),
  };

  async run(): Promise<void> {
    const source = receiptSource(this.args.receipt);
    const response = this.flags.response !== undefined ? { bytes: readResponseFile(this.flags.response), name: this.flags.response } : undefined;
    const fixedKey = this.flags['public-key'] !== undefined ? readPublicKeyFile(this.flags['public-key']) : undefined;

    const key: VerifyInput['key'] = async (keyId) => {
      if (fixedKey) return { publicKeyPem: fixedKey, from: 'file', baseUrl: null };
      // the key route is public: no API key needed to check a receipt from a file
      const baseUrl = offlineHint(() => requireBaseUrl(this.connection()));
      const k = await receiptKey(() => this.client({ auth: false }), baseUrl, keyId);
      return k && { ...k, baseUrl };
    };
    const input: VerifyInput =
      source.kind === 'id'
        ? { value: await fetchReceipt(this.client(), source.id), source: source.id, key }
        : { text: source.kind === 'stdin' ? await readStdin() : readFileSync(source.path, 'utf8'), source: source.kind === 'stdin' ? 'stdin' : source.path, key };
    const verdict = await verifyReceipt({ ...input, ...(response ? { response } : {}) });

    this.out.result(verdict, () => verdictText(verdict));
    if (!verdict.valid) this.exit(EXIT.REFUSED);
  }
}

/** Without a gateway, a receipt file can still be checked offline against its key's PEM. */
function offlineHint<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (!(e instanceof CliError) || e.code !== 'NO_GATEWAY') throw e;
    throw new CliError(e.code, `${e.message} to fetch the receipt key from`, {
      exit: e.exit,
      details: e.details,
      tryNext: `check it offline with the receipt key: agentpay receipts verify FILE --public-key KEY.pem; or ${e.tryNext ?? 'log in to a gateway'}`,
    });
  }
}
