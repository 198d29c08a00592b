/**
 * A forgotten account password: `password forgot` asks the gateway to mail a one-time reset
 * token, `password reset` sets a new password with it. The gateway answers forgot the same
 * way whether or not the email has an account (it mails a notice to an address without one),
 * so the CLI cannot say either.
 */
import { localOutbox, notEmpty, passwordFromStdin } from './account.js';
import { makeClient, type Connection } from './client.js';
import { askSecret, askText } from './prompts.js';

export interface ForgotOutcome {
  email: string;
  /** a gateway started with --dev-echo-tokens hands the token back */
  token?: string;
  outbox?: string;
  next: string;
}

export async function forgotPassword(conn: Connection, opts: { email?: string | undefined }): Promise<ForgotOutcome> {
  const email = await askText({ flag: '--email', message: 'Account email', value: opts.email, validate: notEmpty });
  const res = await makeClient(conn, { auth: false }).accounts.forgotPassword({ email });
  const outbox = localOutbox(conn);
  return {
    email,
    ...(res.token ? { token: res.token } : {}),
    ...(outbox ? { outbox } : {}),
    next: `agentpay password reset --token ${res.token ?? 'TOKEN'}`,
  };
}

export function forgotText(o: ForgotOutcome): string {
  if (o.token) return `Reset token for ${o.email}: ${o.token} (echoed by a development gateway; it works once).`;
  return `A message was sent to ${o.email}${o.outbox ? ` (a local gateway writes it to ${o.outbox})` : ''}: a one-time reset token if the address has an account, else a note that it has none.`;
}

export interface ResetOutcome {
  ok: true;
  next: string;
}

export async function resetPassword(conn: Connection, opts: { token?: string | undefined; password?: string | undefined; passwordStdin?: boolean | undefined }): Promise<ResetOutcome> {
  const token = await askText({ flag: '--token', message: 'Reset token', value: opts.token, validate: notEmpty });
  const password = opts.passwordStdin ? passwordFromStdin() : await askSecret({ flag: '--password', message: 'New password', value: opts.password, validate: notEmpty });
  await makeClient(conn, { auth: false }).accounts.resetPassword({ token: token.trim(), password });
  return { ok: true, next: 'agentpay login --email EMAIL' };
}
