/**
 * What the CLI tells people when something goes wrong. Every failure becomes a
 * `Report`: a code, a message, an exit code and, when the person can fix it, the next
 * thing to try. Unexpected errors are reported as bugs (exit 70), never dressed up.
 * The base command is the one place that prints a Report.
 */
import { Errors } from '@oclif/core';
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isAppError } from '../core/errors.js';
import { DevCredentialsError } from '../gateway/dev-credentials.js';
import { keyKindOf } from '../domain/tenancy/api-keys.js';
import { DEFAULT_SCOPES } from '../domain/tenancy/scopes.js';
import { AgentpayError } from 'agentpay-sdk/errors';
import { closest } from './suggest.js';

/** Exit codes, documented in docs/cli.md. */
export const EXIT = {
  OK: 0,
  /** refused by the gateway, or invalid input */
  REFUSED: 1,
  /** a flag or argument is missing or wrong */
  USAGE: 2,
  /** cannot reach the gateway, or TLS failed */
  UNREACHABLE: 3,
  /** not authenticated (401) */
  UNAUTHENTICATED: 4,
  /** a bug in agentpay */
  BUG: 70,
  /** the person cancelled a prompt (Ctrl-C) */
  CANCELLED: 130,
} as const;

/** A failure the person can act on. */
export class CliError extends Error {
  readonly code: string;
  readonly exit: number;
  readonly tryNext: string | undefined;
  readonly details: Record<string, unknown>;

  constructor(code: string, message: string, opts: { exit?: number; tryNext?: string; details?: Record<string, unknown> } = {}) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    this.exit = opts.exit ?? EXIT.REFUSED;
    this.tryNext = opts.tryNext;
    this.details = opts.details ?? {};
  }
}

export function usageError(message: string, tryNext?: string, details: Record<string, unknown> = {}): CliError {
  return new CliError('USAGE', message, { exit: EXIT.USAGE, ...(tryNext ? { tryNext } : {}), details });
}

export interface Report {
  code: string;
  message: string;
  details: Record<string, unknown>;
  exit: number;
  tryNext?: string;
  /** true for errors agentpay did not expect: print the stack and ask for a report */
  bug?: boolean;
}

export interface ReportContext {
  /** the gateway the command talked to, for connection errors */
  baseUrl?: string;
  /** the command as typed, e.g. "agentpay wallets fund", for usage hints */
  command?: string;
  /** the flags given on the command line (names without --), to name them instead of API fields */
  givenFlags?: readonly string[];
  /** every flag the command has (names without --): a field it refuses is named as that flag even when not typed */
  commandFlags?: readonly string[];
  /** every flag the command accepts, the global ones included (names without --): what a mistyped flag may have meant */
  knownFlags?: readonly string[];
  /** the API key used; its prefix (ap_w_, ap_p_, ap_o_) says its kind */
  apiKey?: string;
  /** the gateway data dir the command used, to name it in file and database errors */
  dataDir?: string;
  /** flags whose value oclif took from their environment variable (flag name -> variable), to name the variable */
  envFlags?: ReadonlyMap<string, string>;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED',
]);
const TLS_CODE = /CERT|SSL|TLS|EPROTO|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

/** The error codes along an error's `cause` chain (fetch wraps the socket error). */
function causeCodes(err: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = err;
  for (let depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    const nested = (e as { errors?: unknown[] }).errors; // AggregateError from happy eyeballs
    if (Array.isArray(nested)) codes.push(...nested.flatMap(causeCodes));
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}

/**
 * The network or TLS failure behind an error, if it is one: fetch's TypeError "fetch failed"
 * (some without a code, e.g. "bad port"), the SDK client's GATEWAY_UNAVAILABLE (no status,
 * the network error as its cause), or a socket error. `cause` is its code, e.g. ECONNREFUSED.
 */
export function networkFailure(err: unknown): { cause: string; tls: boolean } | undefined {
  const codes = causeCodes(err);
  const net = codes.find((c) => NETWORK_CODES.has(c));
  const fetchFailed = err instanceof TypeError && err.message === 'fetch failed';
  const sdkUnreachable = err instanceof AgentpayError && err.code === 'GATEWAY_UNAVAILABLE' && err.status === undefined;
  // a connection's failure only: OpenSSL's codes (ERR_OSSL_*) also come from parsing a key file
  // (every client connection here goes through fetch, undici or the SDK, which wrap TLS errors)
  if (!net && !fetchFailed && !sdkUnreachable) return undefined;
  const tls = codes.find((c) => TLS_CODE.test(c));
  if (tls) return { cause: tls, tls: true };
  const cause = net ?? (sdkUnreachable ? String(err.details.cause ?? 'network error') : (err as { cause?: { message?: string } }).cause?.message || 'network error');
  return { cause, tls: false };
}

function connectionReport(err: unknown, ctx: ReportContext): Report | undefined {
  const failure = networkFailure(err);
  if (!failure) return undefined;
  const where = ctx.baseUrl ? ` at ${ctx.baseUrl}` : '';
  const { cause } = failure;
  if (failure.tls) {
    return {
      code: 'TLS_FAILED',
      message: `TLS connection to the gateway${where} failed (${cause})`,
      details: { cause },
      exit: EXIT.UNREACHABLE,
      tryNext: /WRONG_VERSION|PACKET_LENGTH/.test(cause)
        ? "that port does not speak TLS; use the gateway's HTTPS address (baseUrl), not its plain-HTTP one"
        : "trust the gateway's certificate authority: --ca PATH (a local gateway's is DATA_DIR/tls/ca.pem), --data-dir DIR, or NODE_EXTRA_CA_CERTS",
    };
  }
  return {
    code: 'GATEWAY_UNREACHABLE',
    message: `cannot reach the gateway${where} (${cause})`,
    details: { cause },
    exit: EXIT.UNREACHABLE,
    tryNext: 'is the gateway running? start one with: npx agentpay dev',
  };
}

/** File-system errors in plain words, and what to do about them (`PATH` is replaced by the path). */
const FILE_ERRORS: Record<string, { cause: string; tryNext: string }> = {
  EISDIR: { cause: 'is a directory, expected a file', tryNext: 'move the directory at PATH away (restore the file from a backup if it held data)' },
  ENOTDIR: { cause: 'a part of this path is a file, expected a directory', tryNext: 'move the file that is in the way of PATH aside' },
  EEXIST: { cause: 'already exists', tryNext: 'move PATH aside' },
  EACCES: { cause: 'permission denied', tryNext: 'run as the user that owns PATH, or give yours access (ls -ld PATH shows owner and mode)' },
  EPERM: { cause: 'operation not permitted', tryNext: 'run as the user that owns PATH, or give yours access (ls -ld PATH shows owner and mode)' },
  EROFS: { cause: 'is on a read-only file system', tryNext: 'use a writable location (e.g. another --data-dir)' },
  ENOENT: { cause: 'does not exist', tryNext: 'check the path' },
  ENOSPC: { cause: 'no space left on the device', tryNext: 'free some disk space, then retry' },
  EDQUOT: { cause: 'disk quota exceeded', tryNext: 'free some disk space, then retry' },
  EMFILE: { cause: 'too many open files', tryNext: 'raise the open-file limit (ulimit -n), then retry' },
  ENFILE: { cause: 'too many open files on this system', tryNext: 'close other programs or raise the system open-file limit, then retry' },
  ELOOP: { cause: 'too many symbolic links (a link pointing to itself?)', tryNext: 'check the symbolic links on PATH' },
  ENAMETOOLONG: { cause: 'the name is too long', tryNext: 'use a shorter path' },
  ENOTEMPTY: { cause: 'is a directory that is not empty', tryNext: 'move PATH aside' },
  EBUSY: { cause: 'is in use', tryNext: 'stop the program using PATH, then retry' },
  EIO: { cause: 'input/output error (is the disk failing?)', tryNext: 'check the disk, then retry' },
};
/** syscalls of the file system: the same codes from sockets or child processes are not about a file */
const FILE_SYSCALLS = new Set([
  'open', 'read', 'write', 'close', 'rename', 'mkdir', 'rmdir', 'unlink', 'rm', 'stat', 'lstat', 'fstat', 'scandir', 'opendir',
  'readdir', 'copyfile', 'cp', 'link', 'symlink', 'readlink', 'realpath', 'chmod', 'fchmod', 'chown', 'fchown', 'utime', 'futime',
  'fsync', 'fdatasync', 'ftruncate', 'access', 'mkdtemp',
]);
/** a temporary file of writeFileAtomic (src/core/files.ts), `.NAME.RANDOM.tmp`, stands for the file it becomes */
const ATOMIC_TMP = /^\.(.+)\.[0-9a-f]{16}\.tmp$/;

/**
 * SQLite's (better-sqlite3's) codes for a database file it cannot use; an extended code
 * (SQLITE_CANTOPEN_ISDIR) counts as its primary one. Other SQLite errors (constraints, SQL)
 * are agentpay's own bugs.
 */
const DATABASE_ERRORS: Record<string, { cause: string; tryNext?: string }> = {
  SQLITE_NOTADB: { cause: 'is not an SQLite database' },
  SQLITE_CORRUPT: { cause: 'is corrupt' },
  SQLITE_CANTOPEN: { cause: 'cannot be opened', tryNext: 'check that agentpay.db and its -wal and -shm files are files your user can read and write, in a directory it can write' },
  SQLITE_READONLY: { cause: 'is read-only', tryNext: 'give your user write access to agentpay.db, its -wal and -shm files and their directory' },
  SQLITE_PERM: { cause: 'cannot be accessed (permission denied)', tryNext: 'give your user write access to agentpay.db, its -wal and -shm files and their directory' },
  SQLITE_FULL: { cause: 'cannot grow: the disk is full', tryNext: 'free some disk space, then retry' },
  SQLITE_IOERR: { cause: 'cannot be read or written (input/output error)', tryNext: 'check the disk and the file agentpay.db, then retry' },
  SQLITE_BUSY: { cause: 'is locked by another process', tryNext: 'stop the other process using the data dir, then retry' },
};
const RESTORE_DATABASE = 'restore agentpay.db (with its -wal file) from a backup; a development data dir can instead be removed and made anew, without its data, by agentpay dev';

/**
 * A file the person can fix, not a bug: a Node file-system error (EISDIR, EACCES, ENOSPC…)
 * becomes FILE_ERROR naming the path, and SQLite's refusal of the database file becomes
 * DATABASE_ERROR naming the data dir's database when `dataDir` is known. Undefined for any other error.
 */
export function storageError(err: unknown, dataDir?: string): CliError | undefined {
  if (!(err instanceof Error)) return undefined;
  return databaseError(err, dataDir) ?? fileError(err, dataDir);
}

function databaseError(err: Error, dataDir: string | undefined): CliError | undefined {
  const code = String((err as { code?: unknown }).code ?? '');
  const known = Object.entries(DATABASE_ERRORS).find(([c]) => code === c || code.startsWith(`${c}_`))?.[1];
  if (!known) return undefined;
  const path = dataDir ? join(dataDir, 'agentpay.db') : undefined;
  return new CliError('DATABASE_ERROR', `the gateway's database${path ? ` ${path}` : ''} ${known.cause} (${code})`, {
    tryNext: known.tryNext ?? RESTORE_DATABASE,
    details: { ...(path ? { path } : {}), cause: code },
  });
}

function fileError(err: Error, dataDir: string | undefined): CliError | undefined {
  const e = err as NodeJS.ErrnoException & { dest?: unknown };
  const code = e.code ?? '';
  const known = FILE_ERRORS[code];
  if (!known || typeof e.syscall !== 'string' || !FILE_SYSCALLS.has(e.syscall)) return undefined;
  // a rename names its source first: the file it could not become is its destination
  let path = typeof e.dest === 'string' ? e.dest : e.path;
  const tmp = path ? ATOMIC_TMP.exec(basename(path)) : null;
  if (path && tmp) path = join(dirname(path), tmp[1]!);
  // mkdir over a file says EEXIST
  const overFile = code === 'EEXIST' && e.syscall === 'mkdir';
  // a file or directory that could not be made: the permissions that matter are its nearest existing parent's
  let fix = path;
  if (fix && /^(EACCES|EPERM|EROFS)$/.test(code)) while (!existsSync(fix) && dirname(fix) !== fix) fix = dirname(fix);
  const tryNext = fix
    ? overFile
      ? `move the file ${fix} aside; agentpay makes the directory itself`
      : known.tryNext.replace(/PATH/g, fix)
    : code === 'EISDIR'
      ? `find the directory where a file belongs${dataDir ? ` in ${dataDir}` : ''} and move it away`
      : known.tryNext.replace(/PATH/g, 'the file');
  // reading a directory (or writing to a full disk) fails on an open file, without its path
  const where = path ?? `a file${dataDir ? ` in ${dataDir}` : ''}`;
  return new CliError('FILE_ERROR', `${where}: ${overFile ? 'is a file, expected a directory' : known.cause}`, {
    tryNext,
    details: { ...(path ? { path } : {}), cause: code, syscall: e.syscall },
  });
}

type KeyKind = 'workspace' | 'provider' | 'operator';

/** How to use a key of that kind, for a hint. */
const useKey = (kind: KeyKind) => `--as ${kind} (a dev gateway's key, with --data-dir DIR or ./.agentpay) or --api-key ${kind.toUpperCase()}_KEY`;

/** The one kind of key that can hold a scope, or undefined when workspace and provider keys both can. */
function onlyKindFor(scope: string): KeyKind | undefined {
  const kinds = (['workspace', 'provider'] as const).filter((k) => (DEFAULT_SCOPES[k] as readonly string[]).includes(scope));
  if (kinds.length === 0) return 'operator';
  return kinds.length === 1 ? kinds[0] : undefined;
}

/** The kinds of key the gateway says an action takes (`details.keyKinds`), and whose own key (`details.ownerId`). */
function kindsRequired(e: AgentpayError): { kinds: KeyKind[]; ownerId?: string } | undefined {
  const kinds = Array.isArray(e.details.keyKinds) ? e.details.keyKinds.filter((k): k is KeyKind => k === 'workspace' || k === 'provider' || k === 'operator') : [];
  if (kinds.length === 0) return undefined;
  return { kinds, ...(typeof e.details.ownerId === 'string' ? { ownerId: e.details.ownerId } : {}) };
}


/** The next step for a 403: which key, or which scope, the action needs. */
function tryForForbidden(e: AgentpayError, ctx: ReportContext): string {
  const scope = typeof e.details.scope === 'string' ? e.details.scope : undefined;
  if (scope) {
    const only = onlyKindFor(scope);
    const caller = ctx.apiKey ? keyKindOf(ctx.apiKey) : undefined;
    // a key of a kind that may hold the scope was only made narrower; otherwise another kind of key is needed
    const kindMayHold = caller ? caller === 'operator' || only === undefined || only === caller : only !== 'provider' && only !== 'operator';
    // keys create: a new key gets only scopes its kind may hold and the calling key has
    const creating = /key cannot hold the scope/.test(e.message);
    if (creating || !kindMayHold) {
      return only && only !== caller
        ? `${scope} is held only by ${only} keys: ${creating ? `create this key with one: agentpay keys create --scopes ${scope} ` : 'use one that holds it: '}${useKey(only)}`
        : `use a key that holds ${scope} (agentpay keys list shows each key's scopes)`;
    }
    return `create a key with that scope: agentpay keys create --scopes ${scope}`;
  }
  const required = kindsRequired(e);
  const whoami = 'check which key you are using: agentpay whoami';
  if (required?.ownerId) return `use the ${required.kinds[0]}'s own key (${required.ownerId}): ${useKey(required.kinds[0]!)}; ${whoami}`;
  if (required?.kinds.length === 1) return `use a ${required.kinds[0]} key: ${useKey(required.kinds[0]!)}; ${whoami}`;
  if (required) return `use ${required.kinds.map((k) => `a ${k} key (${useKey(k)})`).join(' or ')}; ${whoami}`;
  return 'the record may belong to another tenant; check which key you are using: agentpay whoami';
}

/** The next step for 501: a sandbox-only shortcut, or something no rail of this gateway does. */
function tryForNotSupported(e: AgentpayError): string {
  if (/top-ups in USDC/.test(e.message)) {
    return 'USDC is not topped up but deposited: agentpay wallets deposit-address WALLET_ID (on a sandbox gateway, then agentpay sandbox deposit ADDRESS --amount USDC_BASE_UNITS); agentpay rail providers lists what each rail takes';
  }
  if (/^no rail provider/.test(e.message)) return "see what this gateway's rails take: agentpay rail providers";
  return 'this gateway has no rail for that; development shortcuts work on a sandbox gateway: npx agentpay dev';
}

/** The next step for INSUFFICIENT_FUNDS: a payout asks for too much, a purchase needs money in. */
function tryForInsufficientFunds(e: AgentpayError, ctx: ReportContext): string {
  const walletId = typeof e.details.walletId === 'string' ? e.details.walletId : 'WALLET_ID';
  if (ctx.command === 'agentpay payouts create') {
    const available = typeof e.details.availableMinor === 'string' ? `the available ${e.details.availableMinor} minor units` : 'the available balance';
    return `pay out at most ${available} (see it with agentpay wallets balance ${walletId})`;
  }
  return `fund the wallet (sandbox): agentpay wallets fund ${walletId} --amount MINOR_UNITS`;
}

/** The next step for a refusal from the gateway, by its code. */
function tryForGateway(e: AgentpayError, ctx: ReportContext): string | undefined {
  switch (e.code) {
    case 'UNAUTHORIZED':
      return 'log in with a valid key: agentpay login (or pass --api-key)';
    case 'FORBIDDEN':
      return tryForForbidden(e, ctx);
    case 'WALLET_NOT_FOUND':
      return 'list the wallets this key can see: agentpay wallets list';
    case 'INSUFFICIENT_FUNDS':
      return tryForInsufficientFunds(e, ctx);
    case 'WALLET_FROZEN':
      return `unfreeze it: agentpay wallets unfreeze ${typeof e.details.walletId === 'string' ? e.details.walletId : 'WALLET_ID'}`;
    case 'CAPABILITY_NOT_FOUND':
      return 'find one with: agentpay search QUERY (your own: agentpay capabilities list)';
    case 'PROVIDER_NOT_FOUND':
      return 'list the providers this key can see: agentpay providers list';
    case 'POLICY_DENIED':
      return 'a workspace policy refuses it: see them with agentpay policies list, and dry-run a purchase with agentpay policies test';
    case 'APPROVAL_REQUIRED':
      return 'a person must approve it first: agentpay approvals (or approvals list, then approvals approve APPROVAL_ID); then retry once';
    case 'WALLET_PROVIDER_PAUSED':
      return 'after three seller errors in a row the seller is paused for this wallet; resume it: agentpay wallets resume-provider WALLET_ID --provider PROVIDER_ID';
    case 'CHALLENGE_EXPIRED':
    case 'REPLAY_DETECTED':
      return 'call the seller again for a new price quote';
    case 'IDEMPOTENCY_IN_PROGRESS':
      return 'the first call with this idempotency key is still running; retry in a moment with the same key to get its answer';
    case 'IDEMPOTENCY_KEY_REUSED':
      return 'that idempotency key was used for another request; use a new key for a new request';
    case 'INVALID_CURSOR':
      return 'start from the first page (no --after), then pass the nextCursor each page prints';
    case 'NOT_SUPPORTED':
      return tryForNotSupported(e);
    case 'RATE_LIMITED':
      return 'wait a moment and retry';
    case 'SERVICE_UNAVAILABLE':
      return 'the gateway is shutting down or restarting; retry in a few seconds';
    case 'REQUEST_TIMEOUT':
      return 'the request reached the gateway too slowly; check the network and retry';
    case 'HEADERS_TOO_LARGE':
      return 'send fewer or shorter headers';
    case 'INSECURE_TRANSPORT':
      return 'use the https:// address of the gateway';
    case 'INTERNAL':
      return "the gateway failed; look for the errorId in the gateway's log";
    case 'HTTP_ERROR':
      return 'check that --gateway-url points at an agentpay gateway';
    default:
      return undefined;
  }
}

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
function inCliTerms(e: AgentpayError, ctx: ReportContext): { message: string; flag?: string; tryNext?: string } {
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

/** DevCredentialsError as the CLI reports it: the file, and how to get working dev keys again. */
function devCredentialsError(e: DevCredentialsError): CliError {
  const dataDir = dirname(e.path);
  const restart = `restart the gateway (npx agentpay dev --data-dir ${dataDir}): it makes new dev keys`;
  const fix = e.readError === undefined
    ? `remove it and ${restart}`
    : e.readError === 'EISDIR'
      ? `move that directory away and ${restart}`
      : `check that it belongs to you and is readable by you (ls -l ${e.path})`;
  return new CliError(e.code, e.message, {
    tryNext: `${fix}; or use another gateway and key: --gateway-url URL --api-key KEY`,
    details: { path: e.path, ...(e.readError ? { cause: e.readError } : {}) },
  });
}

/**
 * oclif's refusal of a flag value that came from the flag's environment variable (the flag was
 * not typed): reported as that variable, which is what the person has to change. `parsed` is a
 * "--flag: problem" message of a value oclif could not parse; `raw` may instead be oclif's
 * "Expected --flag=VALUE to be one of: A, B" for an option.
 */
function envFlagError(raw: string, parsed: string | undefined, ctx: ReportContext): Report | undefined {
  if (!ctx.envFlags?.size) return undefined;
  const option = /^Expected --([\w-]+)=([\s\S]*) to be one of: (.*)$/.exec(raw);
  const name = option?.[1] ?? (parsed ? /^--([\w-]+):/.exec(parsed)?.[1] : undefined);
  const env = name === undefined ? undefined : ctx.envFlags.get(name);
  if (!name || !env) return undefined;
  const problem = option
    ? ` must be one of: ${option[3]}, got ${JSON.stringify(option[2])}`
    : `: ${parsed!.slice(name.length + 3).trimStart()}`;
  return {
    code: 'USAGE',
    message: `the environment variable ${env} (read for --${name})${problem}`,
    details: { flag: `--${name}`, env },
    exit: EXIT.USAGE,
    tryNext: `correct ${env}, or unset it (unset ${env}); a --${name} typed on the command line overrides it`,
  };
}

/**
 * oclif's NonExistentFlagsError ("Nonexistent flag: --limt") in the CLI's words, with the
 * nearest flag the command accepts: `unknown flag --limt; did you mean --limit?`,
 * `details: {flag, suggestion}`.
 */
function unknownFlagReport(err: Errors.CLIError, raw: string, ctx: ReportContext, help: string): Report | undefined {
  const flags = (err as { flags?: unknown }).flags;
  if (!/^Nonexistent flags?: /.test(raw) || !Array.isArray(flags) || !flags.every((f): f is string => typeof f === 'string') || !flags.length) return undefined;
  const names = flags.map((f) => f.replace(/=.*$/s, ''));
  const guesses = names.map((name) => {
    const guess = name.startsWith('--') && ctx.knownFlags ? closest(name.slice(2), ctx.knownFlags) : undefined;
    return guess === undefined ? undefined : `--${guess}`;
  });
  const message = names.length === 1
    ? `unknown flag ${names[0]}` + (guesses[0] ? `; did you mean ${guesses[0]}?` : '')
    : `unknown flags ${names.map((n, i) => (guesses[i] ? `${n} (did you mean ${guesses[i]}?)` : n)).join(', ')}`;
  return {
    code: 'USAGE',
    message,
    details: { flag: names[0], ...(guesses[0] ? { suggestion: guesses[0] } : {}) },
    exit: EXIT.USAGE,
    tryNext: help,
  };
}

export function describeError(err: unknown, ctx: ReportContext = {}): Report {
  const help = ctx.command ? `${ctx.command} --help` : 'agentpay --help';
  if (err instanceof DevCredentialsError) return describeError(devCredentialsError(err), ctx);
  if (err instanceof CliError) {
    return {
      code: err.code,
      message: err.message,
      details: err.details,
      exit: err.exit,
      ...(err.tryNext ? { tryNext: err.tryNext } : err.exit === EXIT.USAGE ? { tryNext: help } : {}),
    };
  }
  if (err instanceof AgentpayError) {
    const conn = err.status === undefined ? connectionReport(err, ctx) : undefined;
    if (conn) return conn;
    const cli = inCliTerms(err, ctx);
    const tryNext = cli.tryNext ?? tryForGateway(err, ctx) ?? (cli.flag ? help : undefined);
    const errorId = err.body.errorId;
    return {
      code: err.code,
      message: typeof errorId === 'string' ? `${cli.message} (errorId ${errorId})` : cli.message,
      details: { ...err.details, ...(cli.flag ? { flag: cli.flag } : {}), ...(err.status ? { status: err.status } : {}), ...(typeof errorId === 'string' ? { errorId } : {}) },
      exit: err.status === 401 ? EXIT.UNAUTHENTICATED : EXIT.REFUSED,
      ...(tryNext ? { tryNext } : {}),
    };
  }
  // validation by shared helpers (e.g. parseMinor) on input the person typed
  if (isAppError(err)) {
    return { code: err.code, message: err.message, details: err.details, exit: EXIT.REFUSED, tryNext: help };
  }
  // oclif's own parse errors: unknown flag, missing argument, bad option value
  if (err instanceof Errors.CLIError) {
    // a flag value oclif's own parser refused reads "Parsing --limit \n\tExpected an integer ...": one line naming the flag
    const raw = err.message.replace(/\n+See more help with --help$/, '');
    const parsing = /^Parsing (--[\w-]+)\s*\n\s*([\s\S]*)$/.exec(raw);
    const message = parsing
      ? `${parsing[1]}: ${parsing[2]!.charAt(0).toLowerCase()}${parsing[2]!.slice(1).replace(/\s*\n\s*/g, '; ')}`
      : raw;
    const fromEnv = envFlagError(raw, parsing ? message : undefined, ctx);
    if (fromEnv) return fromEnv;
    const unknown = unknownFlagReport(err, raw, ctx, help);
    if (unknown) return unknown;
    // oclif's RequiredArgsError lists the missing args (`args: [{name}]`), named in the help's usage line in capitals
    const missing = /^Missing \d+ required arg/.test(message) ? (err as { args?: Array<{ name?: unknown }> }).args?.[0]?.name : undefined;
    const details = typeof missing === 'string' ? { arg: missing.toUpperCase() } : parsing ? { flag: parsing[1] } : {};
    return { code: 'USAGE', message, details, exit: err.oclif?.exit === 0 ? 0 : EXIT.USAGE, tryNext: help };
  }
  // @inquirer/prompts: Ctrl-C or a closed terminal while asking
  if (err instanceof Error && (err.name === 'ExitPromptError' || err.name === 'AbortPromptError')) {
    return { code: 'CANCELLED', message: 'cancelled; nothing was sent', details: {}, exit: EXIT.CANCELLED };
  }
  const conn = connectionReport(err, ctx);
  if (conn) return conn;
  const storage = storageError(err, ctx.dataDir);
  if (storage) return describeError(storage, ctx);
  const message = err instanceof Error ? err.message : String(err);
  return { code: 'INTERNAL', message, details: {}, exit: EXIT.BUG, bug: true };
}
