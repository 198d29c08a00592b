/** A gateway message in the CLI's words: API fields become flags, API routes become commands. */
import { AgentpayError } from 'agentpay-sdk/errors';
import type { ReportContext } from './report.js';

/**
 * API routes that gateway messages name, as the CLI commands that do the same. Only the words
 * change: the next step is chosen from the refusal's code and details (hints.ts), never from these.
 */
const ROUTE_COMMANDS: ReadonlyArray<{ route: RegExp; command: string }> = [
  { route: /PUT \/v1\/providers\/[^/\s]+\/payout-destination/g, command: 'agentpay payouts destination set' },
  { route: /POST \/v1\/accounts\/password\/forgot/g, command: 'agentpay password forgot' },
  { route: /GET \/v1\/rail\/providers/g, command: 'agentpay rail providers' },
  { route: /POST \/v1\/wallets\/[^/\s]+\/deposit-address/g, command: 'agentpay wallets deposit-address WALLET_ID' },
  { route: /POST \/v1\/wallets\/([^/\s]+)\/resume-provider/g, command: 'agentpay wallets resume-provider $1 --provider PROVIDER_ID' },
  { route: /POST \/v1\/discovery\/search/g, command: 'agentpay search' },
  { route: /POST \/v1\/accounts\/login/g, command: 'agentpay login' },
];

/**
 * A gateway message as a CLI user reads it: the API field it names becomes the flag that
 * was typed, or that the command has for it (`ownerId:` -> `--owner-id:`, `amountMinor:` ->
 * `--amount:`, `destination:` -> `--destination:`), and API routes
 * become the commands that do the same. The gateway's code and details stay as sent.
 */
export function inCliTerms(e: AgentpayError, ctx: ReportContext): { message: string; flag?: string } {
  let message = e.message;
  let flag: string | undefined;
  const field = typeof e.details.field === 'string' ? e.details.field : undefined;
  if (field && message.startsWith(`${field}:`)) {
    const name = field.replace(/Minor$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (ctx.givenFlags?.includes(name) || ctx.commandFlags?.includes(name)) {
      flag = `--${name}`;
      message = `${flag}${message.slice(field.length)}`;
    }
  }
  for (const r of ROUTE_COMMANDS) message = message.replace(r.route, r.command);
  return { message, ...(flag ? { flag } : {}) };
}
