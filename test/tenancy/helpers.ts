/** Shared steps of the tenancy tests: reading the local outbox, and a full signup. */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { outboxPath, type OutboxLine } from '../../src/domain/platform/mailer.js';
import type { SignupVerified } from '../../packages/sdk/src/types.js';
import type { TestGateway } from '../helpers/gateway.js';

export const PASSWORD = 'correct horse battery';

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomBytes(5).toString('hex')}@example.com`;
}

export function readOutbox(dataDir: string): OutboxLine[] {
  const p = outboxPath(dataDir);
  if (!existsSync(p)) return [];
  return readFileSync(p, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as OutboxLine);
}

/** The latest message of a kind sent to an address (or about a signup). */
export function lastMail(dataDir: string, match: { to?: string; signupId?: string; kind?: OutboxLine['kind'] }): OutboxLine {
  const found = readOutbox(dataDir).filter(
    (m) => (!match.to || m.to === match.to) && (!match.signupId || m.signupId === match.signupId) && (!match.kind || m.kind === match.kind),
  );
  const last = found.at(-1);
  if (!last) throw new Error(`no mail in the outbox matching ${JSON.stringify(match)}`);
  return last;
}

/** Signs up and verifies with the token from the outbox. */
export async function signUp(
  t: TestGateway,
  opts: { kind?: 'workspace' | 'provider'; email?: string; password?: string; name?: string } = {},
): Promise<SignupVerified & { email: string; password: string; signupId: string }> {
  const email = opts.email ?? uniqueEmail(opts.kind ?? 'workspace');
  const password = opts.password ?? PASSWORD;
  const anon = t.client();
  const { signup } = await anon.signup.start({ kind: opts.kind ?? 'workspace', name: opts.name ?? 'Acme Research', email, password });
  const { token } = lastMail(t.dataDir, { signupId: signup.id });
  const verified = await anon.signup.verify({ signupId: signup.id, token });
  return { ...verified, email, password, signupId: signup.id };
}

/** The rejection of a promise as an AgentpayError-like value (fails the test if it resolves). */
export async function refusal(p: Promise<unknown>): Promise<{ code: string; status?: number; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; status?: number; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected the call to be refused, but it succeeded');
}
