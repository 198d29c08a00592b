/** A gateway message in the CLI's words: API fields become flags, API routes become commands. */
import { AgentpayError } from 'agentpay-sdk/errors';
import type { ReportContext } from './report.js';

/** API routes that gateway messages name, as the CLI commands that do the same. */
const ROUTE_COMMANDS: ReadonlyArray<{ route: RegExp; command: string; tryNext?: string | ((e: AgentpayError) => string) }> = [
  {
    route: /PUT \/v1\/providers\/[^/\s]+\/payout-destination/g,
    command: 'agentpay payouts destination set',
    tryNext: 'register one with a provider key: agentpay payouts destination set 0x… (USDC on Base) or ext_… (a bank account)',
  },
  {
    route: /POST \/v1\/accounts\/password\/forgot/g,
    command: 'agentpay password forgot',
    // the gateway names this route after a wrong login, a used or expired reset token and a taken email
    // (told apart by the field they name): each gets its own next step
    tryNext: (e) => {
      const reset = 'agentpay password forgot --email EMAIL, then agentpay password reset --token TOKEN';
      if (e.details.field === 'token') return `request a new token: ${reset}`;
      if (e.code === 'CONFLICT' && e.details.field === 'email') return `log in with agentpay login, or reset the password: ${reset}`;
      return `check the email and password; a forgotten one is reset with: ${reset}`;
    },
  },
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
export function inCliTerms(e: AgentpayError, ctx: ReportContext): { message: string; flag?: string; tryNext?: string } {
  let message = e.message;
  let flag: string | undefined;
  let tryNext: string | undefined;
  const field = typeof e.details.field === 'string' ? e.details.field : undefined;
  if (field && message.startsWith(`${field}:`)) {
    const name = field.replace(/Minor$/, '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    if (ctx.givenFlags?.includes(name) || ctx.commandFlags?.includes(name)) {
      flag = `--${name}`;
      message = `${flag}${message.slice(field.length)}`;
    }
  }
  for (const r of ROUTE_COMMANDS) {
    if (!r.route.test(message)) continue;
    r.route.lastIndex = 0;
    tryNext ??= typeof r.tryNext === 'function' ? r.tryNext(e) : r.tryNext;
    message = message.replace(r.route, r.command);
  }
  return { message, ...(flag ? { flag } : {}), ...(tryNext ? { tryNext } : {}) };
}
