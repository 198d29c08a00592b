/**
 * Signing up, logging in and asking who you are. Signup and login end by saving the
 * new key as a profile (and making it current), so later commands need no flags.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { outboxPath } from '../domain/platform/mailer.js';
import type { SignupRecord, SignupVerified, Whoami } from 'agentpay-sdk/types';
import { makeClient, requireBaseUrl, type Connection } from './client.js';
import { usageError } from './errors/index.js';
import { renderFields } from './output.js';
import { findLocalDataDir } from './local-gateway.js';
import { DEFAULT_PROFILE, maskKey, saveCurrentProfile, type Profile, type SaveOutcome } from './profile.js';
import { askChoice, askSecret, askText, canPrompt } from './prompts.js';

export interface SavedProfile {
  name: string;
  path: string;
}

/** The profile for a key on the connection's gateway; a dev gateway's is followed by its data dir. */
function profileFor(conn: Connection, apiKey: string): Profile {
  const fromDataDir = conn.sources.baseUrl === 'data-dir' || conn.sources.baseUrl === 'local';
  const dataDir = fromDataDir ? conn.dataDir : conn.sources.baseUrl === 'profile' ? conn.profileDataDir : undefined;
  return {
    baseUrl: requireBaseUrl(conn),
    apiKey,
    ...(conn.ca ? { ca: conn.ca } : {}),
    ...(dataDir ? { dataDir } : {}),
  };
}

/** Told, on stderr, when saving changed which profile (or key) later commands use. */
export type NoteSink = (note: string) => void;

function save(conn: Connection, apiKey: string, profileName: string | undefined, onNote: NoteSink | undefined): SavedProfile {
  const name = profileName ?? DEFAULT_PROFILE;
  const profile = profileFor(conn, apiKey);
  const saved = saveCurrentProfile(name, profile);
  const note = switchNote(name, profile, saved);
  if (note) onNote?.(note);
  return { name, path: saved.path };
}

/**
 * One line saying what saving profile `name` changed for later commands, and how to go back; none
 * when nothing did. Profiles rank above ./.agentpay (docs/cli.md), so the first profile saved in a
 * directory with a dev gateway takes over from its dev keys: said too.
 */
export function switchNote(name: string, profile: Profile, saved: SaveOutcome, cwd: string = process.cwd()): string | undefined {
  const now = `The current profile is now "${name}", saved in ${saved.path}`;
  if (saved.previousCurrent === name) {
    const old = saved.replaced;
    if (!old || (old.apiKey === profile.apiKey && old.baseUrl === profile.baseUrl)) return undefined;
    // the same name, another key: the old key is no longer saved anywhere the CLI knows
    return `Profile "${name}" in ${saved.path} now holds this key, replacing ${maskKey(old.apiKey)} (for ${old.baseUrl}), which stays valid but is no longer saved; keep both next time with --profile NAME`;
  }
  if (saved.previousCurrent) return `${now}, instead of "${saved.previousCurrent}"; to go back: agentpay config use ${saved.previousCurrent}`;
  const local = findLocalDataDir(cwd);
  if (local) {
    const rel = relative(cwd, local);
    return `${now}: commands in this directory now use it instead of ${rel.startsWith('..') ? rel : `./${rel}`}'s dev keys; to go back: agentpay config remove ${name} (the key stays valid), or add --data-dir ${rel} to a command`;
  }
  return `${now}; to undo: agentpay config remove ${name} (the key stays valid)`;
}

// ---- signup ----

export interface SignupOptions {
  /** verify an existing signup instead of starting one */
  signupId?: string | undefined;
  token?: string | undefined;
  kind?: 'workspace' | 'provider' | undefined;
  name?: string | undefined;
  email?: string | undefined;
  password?: string | undefined;
  /** read the password from stdin instead */
  passwordStdin?: boolean | undefined;
  website?: string | undefined;
  profileName?: string | undefined;
  /** told when the saved profile changes what later commands use */
  onNote?: NoteSink | undefined;
}

export interface SignupOutcome {
  signup?: SignupRecord;
  /** where a local gateway delivered the token, when the CLI knows its data dir */
  outbox?: string;
  /** absent while the signup waits for its token */
  verified?: SignupVerified;
  profile?: SavedProfile;
  /** while the signup waits for its token: the command that verifies it */
  next?: string;
}

export const notEmpty = (v: string) => (v.trim() ? true : 'required');

/** Where a local gateway (no mail server) writes the tokens it mails: its DATA_DIR/outbox.jsonl. */
export function localOutbox(conn: Connection): string | undefined {
  if (conn.dataDir && (conn.sources.baseUrl === 'data-dir' || conn.sources.baseUrl === 'local')) return outboxPath(conn.dataDir);
  // a profile saved from a local gateway follows that gateway (its data dir), so its outbox too
  if (conn.profileDataDir && conn.sources.baseUrl === 'profile') return outboxPath(conn.profileDataDir);
  return undefined;
}

/** `--password-stdin`: all of stdin but one trailing newline; empty is a usage error. */
export function passwordFromStdin(): string {
  const password = readFileSync(0, 'utf8').replace(/\r?\n$/, '');
  if (!password) throw usageError('--password-stdin: stdin was empty; pipe the password in, e.g. printf %s "$PASSWORD" | agentpay …');
  return password;
}

export async function signup(conn: Connection, opts: SignupOptions): Promise<SignupOutcome> {
  const client = makeClient(conn, { auth: false });
  let record: SignupRecord | undefined;
  let signupId = opts.signupId;
  let token = opts.token;

  if (!signupId) {
    const kind = await askChoice({ flag: '--kind', message: 'Sign up as', value: opts.kind, choices: ['workspace', 'provider'] as const });
    const name = await askText({ flag: '--name', message: kind === 'provider' ? 'Provider name' : 'Workspace name', value: opts.name, validate: notEmpty });
    const email = await askText({ flag: '--email', message: 'Email', value: opts.email, validate: notEmpty });
    const password = opts.passwordStdin ? passwordFromStdin() : await askSecret({ flag: '--password', message: 'Password', value: opts.password, validate: notEmpty });
    const website = kind === 'provider' && opts.website === undefined && canPrompt()
      ? (await askText({ flag: '--website', message: 'Website (optional)', optional: true })) || undefined
      : opts.website;
    const started = await client.signup.start({ kind, name, email, password, ...(website ? { website } : {}) });
    record = started.signup;
    signupId = started.signup.id;
    // a gateway started with --dev-echo-tokens hands the token back (not for an address that
    // already has an account: its owner is mailed a notice instead); others mail it
    token ??= started.token;
  }
  if (!token) {
    const file = localOutbox(conn);
    const outbox = file ? { outbox: file } : {};
    if (!canPrompt()) {
      const pending = record ?? (await client.signup.get(signupId)).signup;
      return { signup: pending, ...outbox, next: `agentpay signup --signup-id ${pending.id} --token TOKEN` };
    }
    const where = outbox.outbox ? `in ${outbox.outbox}` : record ? `mailed to ${record.email}` : 'from the email';
    token = await askText({ flag: '--token', message: `Verification token (${where}; if the address already has an account, the message says so: log in instead)`, validate: notEmpty });
  }
  const verified = await client.signup.verify({ signupId, token: token.trim() });
  return { ...(record ? { signup: record } : {}), verified, profile: save(conn, verified.apiKey.key, opts.profileName, opts.onNote) };
}

export function signupText(o: SignupOutcome): string {
  if (!o.verified) {
    const s = o.signup!;
    // the next step (o.next) is a note for people: the command prints it on stderr. The gateway
    // answers alike whether or not the address has an account, so the text covers both.
    return [
      `Signup ${s.id} is ${s.status}: check the email sent to ${s.email}${o.outbox ? ` (a local gateway writes it to ${o.outbox})` : ''}.`,
      'It holds the verification token, or, if the address already has an account, says so: then log in (agentpay login --email EMAIL) or reset the password (agentpay password forgot --email EMAIL).',
    ].join('\n');
  }
  const { tenant, apiKey } = o.verified;
  return [
    renderFields([
      ['tenant', `${tenant.kind} ${tenant.id}`],
      ...(tenant.walletId ? ([['settlement wallet', tenant.walletId]] as const) : []),
      ['api key', apiKey.key],
      ['key id', apiKey.id],
      ['scopes', apiKey.scopes.join(' ')],
    ]),
    '',
    `The key is shown once; it is saved in profile "${o.profile!.name}" (${o.profile!.path}).`,
    ...(tenant.kind === 'provider' ? ['A new provider is pending verification until an operator approves it.'] : []),
  ].join('\n');
}

// ---- login ----

export interface LoginOptions {
  email?: string | undefined;
  password?: string | undefined;
  /** read the password from this file descriptor's text (e.g. "-" for stdin) instead */
  passwordStdin?: boolean | undefined;
  profileName?: string | undefined;
  /** told when the saved profile changes what later commands use */
  onNote?: NoteSink | undefined;
}

export interface LoginOutcome {
  whoami: Whoami;
  baseUrl: string;
  profile: SavedProfile;
  /** set when login by email minted a new key */
  expiresAt?: string;
}

export async function login(conn: Connection, opts: LoginOptions): Promise<LoginOutcome> {
  const baseUrl = requireBaseUrl(conn);
  let apiKey: string;
  let expiresAt: string | undefined;
  if (opts.email) {
    const password = opts.passwordStdin ? passwordFromStdin() : await askSecret({ flag: '--password', message: 'Password', value: opts.password, validate: notEmpty });
    const res = await makeClient(conn, { auth: false }).accounts.login({ email: opts.email, password });
    apiKey = res.apiKey.key;
    expiresAt = res.apiKey.expiresAt;
  } else {
    // a key from flags, env or a dev data dir; a saved profile's key is not a new login
    const given = conn.sources.apiKey && conn.sources.apiKey !== 'profile' ? conn.apiKey : undefined;
    if (!given && !canPrompt()) {
      throw usageError('missing --api-key (or --email, or --data-dir of a local gateway); there is no terminal to ask on', 'agentpay login --api-key KEY --gateway-url URL', { flag: '--api-key' });
    }
    apiKey = given ?? (await askSecret({ flag: '--api-key', message: 'API key', validate: notEmpty }));
  }
  // the key is checked before it is saved: a typo never becomes a profile
  const whoami = await makeClient(conn, { apiKey }).auth.whoami();
  return { whoami, baseUrl, profile: save(conn, apiKey, opts.profileName, opts.onNote), ...(expiresAt ? { expiresAt } : {}) };
}

export function loginText(o: LoginOutcome): string {
  return [
    `Logged in to ${o.baseUrl} as ${o.whoami.tenant.kind} ${o.whoami.tenant.name} (${o.whoami.tenant.id}).`,
    ...(o.expiresAt ? [`The key expires at ${o.expiresAt}.`] : []),
    `Saved as profile "${o.profile.name}" in ${o.profile.path}; it is now the current profile.`,
  ].join('\n');
}

// ---- whoami ----

export function whoamiText(w: Whoami, conn: Connection): string {
  return renderFields([
    ['gateway', conn.baseUrl],
    ['key from', conn.sources.apiKey === 'profile' ? `profile "${conn.profile}"` : conn.sources.apiKey],
    ['tenant', `${w.tenant.kind} ${w.tenant.id}`],
    ['name', w.tenant.name],
    ['status', `${w.tenant.status}${w.tenant.verified ? ', verified' : ''}`],
    ...(w.tenant.walletId ? ([['settlement wallet', w.tenant.walletId]] as const) : []),
    ['key', `${w.key.id} (${w.key.prefix}…, ${w.key.name})`],
    ['scopes', w.key.scopes.join(' ')],
    ['expires', w.key.expiresAt ?? 'never'],
  ]);
}
