/**
 * `agentpay receipts verify`: is this receipt what the platform signed, and does it
 * cover this response? The receipt comes from a file, stdin or the gateway (by id); its
 * signature is checked here, offline, against the receipt key its `signingKeyId` names.
 * That key is fetched from the gateway once and cached on disk (public keys never change
 * for a key id, and retired ones stay retrievable), so later checks need no network.
 *
 * The answer is a verdict, not an exception: every problem found is listed with a code
 * and, for a malformed receipt, the field. Failures to check at all (no gateway, an
 * unreadable file) are errors with their own exit codes, as in every command.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic, ensurePrivateDir } from '../core/files.js';
import { join, resolve } from 'node:path';
import { InvalidPublicKeyError, parsePublicKeyPem, verifyObject } from '../core/ed25519.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import { AgentpayError } from 'agentpay-sdk/errors';
import { decodeHeader, responseHash, type Receipt } from 'agentpay-sdk/protocol';
import { receiptProblems } from 'agentpay-sdk/contract';
import { CliError, networkFailure, usageError } from './errors/index.js';
import { renderFields } from './output.js';
import { configDir } from './profile.js';

export type ReceiptSource = { kind: 'file'; path: string } | { kind: 'stdin' } | { kind: 'id'; id: string };

export interface Problem {
  code: 'RECEIPT_MALFORMED' | 'UNKNOWN_KEY_ID' | 'SIGNATURE_MISMATCH' | 'RESPONSE_HASH_MISMATCH' | 'RESPONSE_HASH_ABSENT';
  message: string;
  /** the receipt field at fault (malformed receipts) */
  field?: string;
}

export interface Verdict {
  valid: boolean;
  /** where the receipt came from: a file path, "stdin", or the receipt id fetched */
  source: string;
  receipt: Receipt | null;
  checks: {
    format: 'ok' | 'malformed';
    signature: 'valid' | 'mismatch' | 'unknown_key' | 'not_checked';
    responseHash: 'match' | 'mismatch' | 'absent' | 'not_checked';
  };
  /** the receipt key used, and where it came from */
  key: { keyId: string; from: 'cache' | 'gateway' | 'file'; baseUrl: string | null } | null;
  problems: Problem[];
}

const RECEIPT_ID = /^rcp_[A-Za-z0-9_-]+$/;

/** `-` is stdin, an existing path a file, else a receipt id (rcp_…) to fetch. */
export function receiptSource(arg: string, cwd: string = process.cwd()): ReceiptSource {
  if (arg === '-') return { kind: 'stdin' };
  const path = resolve(cwd, arg);
  if (existsSync(path)) return { kind: 'file', path };
  if (RECEIPT_ID.test(arg)) return { kind: 'id', id: arg };
  throw usageError(`${arg}: no such file, and not a receipt id (rcp_…)`, 'pass a receipt JSON file, - to read it from stdin, or a receipt id', { arg });
}

export async function readStdin(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stdin.isTTY) {
    throw usageError('- reads the receipt from stdin, but stdin is a terminal', 'pipe it in: agentpay receipts show rcp_… --json | agentpay receipts verify -');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

// ---- the receipt's shape ----

const malformed = (field: string, message: string): Problem => ({ code: 'RECEIPT_MALFORMED', field, message: `${field}: ${message}` });

/**
 * The receipt in a text: receipt JSON, JSON holding it under `receipt` (what `receipts show
 * --json` and `buy --json` print), or the x-service-receipt header value (base64url JSON).
 */
export function parseReceiptText(text: string): { value: unknown } | { problem: Problem } {
  const trimmed = text.trim();
  if (!trimmed) return { problem: malformed('(receipt)', 'the input is empty') };
  let value: unknown;
  if (trimmed.startsWith('{')) {
    try {
      value = JSON.parse(trimmed);
    } catch (e) {
      return { problem: malformed('(receipt)', `not valid JSON (${(e as Error).message})`) };
    }
  } else {
    try {
      value = decodeHeader(trimmed);
    } catch {
      return { problem: malformed('(receipt)', 'neither JSON nor an x-service-receipt header value (base64url JSON)') };
    }
  }
  const o = value as Record<string, unknown>;
  if (o && typeof o === 'object' && !('signature' in o) && 'receipt' in o) value = o.receipt;
  return { value };
}

/** Every field that is not what the protocol (docs/protocol.md, Receipt) says, by name: the contract's one receipt check. */
export function receiptShapeProblems(value: unknown): Problem[] {
  return receiptProblems(value).map((p) => malformed(p.field, p.reason));
}

// ---- receipt keys, cached per gateway ----

interface CachedKey {
  publicKeyPem: string;
  fetchedAt: string;
}
/** gateway URL -> key id -> key */
type KeyCacheFile = Record<string, Record<string, CachedKey>>;

export const keyCachePath = (env: NodeJS.ProcessEnv = process.env) => join(configDir(env), 'receipt-keys.json');

/** One spelling per gateway, so https://h:1/ and https://h:1 share their cache. */
export function gatewayCacheKey(baseUrl: string): string {
  const u = new URL(baseUrl);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

function readCache(path: string): KeyCacheFile {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as KeyCacheFile) : {};
  } catch {
    return {}; // missing or damaged: the keys are fetched again
  }
}

function writeCache(path: string, file: KeyCacheFile): void {
  ensurePrivateDir(join(path, '..'));
  writeFileAtomic(path, JSON.stringify(file, null, 2) + '\n', { mode: 0o644 }); // public keys only
}

/** A receipt key found by id; one read from the cache can be fetched again. */
export interface FoundKey {
  publicKeyPem: string;
  from: 'cache' | 'gateway';
  /**
   * Fetches the key from the gateway again and rewrites its cache entry: a damaged cache file
   * (or a key written there by hand) must not make a good receipt look changed.
   */
  refetch?: () => Promise<FoundKey | null>;
}

const isPublicKey = (pem: unknown) => {
  if (typeof pem !== 'string') return false;
  try {
    parsePublicKeyPem(pem);
    return true;
  } catch {
    return false;
  }
};

/**
 * The receipt key of a gateway by id: from the cache, else fetched (public route) and
 * cached. Null when the gateway has no such key. `client` is only called on a cache miss,
 * so a cached key needs neither the gateway nor its CA file. A cached entry that is not a
 * public key is a miss.
 */
export async function receiptKey(client: () => AgentpayClient, baseUrl: string, keyId: string, cachePath: string = keyCachePath()): Promise<FoundKey | null> {
  const gw = gatewayCacheKey(baseUrl);
  const fetchKey = async (): Promise<FoundKey | null> => {
    let publicKeyPem: string;
    try {
      const key = await client().platform.receiptKey(keyId);
      publicKeyPem = key.publicKeyPem;
    } catch (e) {
      if (e instanceof AgentpayError && e.status === 404) return null;
      throw e;
    }
    const file = readCache(cachePath); // read again: another run may have added keys meanwhile
    file[gw] = { ...file[gw], [keyId]: { publicKeyPem, fetchedAt: new Date().toISOString() } };
    writeCache(cachePath, file);
    return { publicKeyPem, from: 'gateway' };
  };
  const cached = readCache(cachePath)[gw]?.[keyId]?.publicKeyPem;
  if (isPublicKey(cached)) return { publicKeyPem: cached!, from: 'cache', refetch: fetchKey };
  return fetchKey();
}

export function readPublicKeyFile(path: string): string {
  const full = resolve(path);
  if (!existsSync(full)) throw usageError(`--public-key: ${full} does not exist`, "pass the receipt key's PEM, e.g. from GET /v1/platform/receipt-keys/KEY_ID", { flag: '--public-key' });
  const pem = readFileSync(full, 'utf8');
  try {
    parsePublicKeyPem(pem);
  } catch (e) {
    if (e instanceof InvalidPublicKeyError) throw usageError(`--public-key: ${full} ${e.message}`, undefined, { flag: '--public-key' });
    throw e;
  }
  return pem;
}

export function readResponseFile(path: string): Uint8Array {
  const full = resolve(path);
  if (!existsSync(full)) throw usageError(`--response: ${full} does not exist`, 'pass the file holding the exact response body the receipt was issued for', { flag: '--response' });
  return readFileSync(full);
}

// ---- the verdict ----

export interface VerifyInput {
  /** the receipt as text (file or stdin), or already parsed (fetched by id) */
  text?: string;
  value?: unknown;
  source: string;
  /** finds the receipt key by id: a fixed key (--public-key) or the gateway's, cached */
  key: (keyId: string) => Promise<{ publicKeyPem: string; from: 'cache' | 'gateway' | 'file'; baseUrl: string | null; refetch?: FoundKey['refetch'] } | null>;
  /** the response the receipt should cover, and the name to report it by */
  response?: { bytes: Uint8Array; name: string };
}

export async function verifyReceipt(input: VerifyInput): Promise<Verdict> {
  const verdict: Verdict = {
    valid: false,
    source: input.source,
    receipt: null,
    checks: { format: 'malformed', signature: 'not_checked', responseHash: 'not_checked' },
    key: null,
    problems: [],
  };
  let value = input.value;
  if (input.text !== undefined) {
    const parsed = parseReceiptText(input.text);
    if ('problem' in parsed) {
      verdict.problems.push(parsed.problem);
      return verdict;
    }
    value = parsed.value;
  }
  const shape = receiptShapeProblems(value);
  if (shape.length) {
    verdict.problems.push(...shape);
    return verdict;
  }
  const receipt = value as Receipt;
  verdict.receipt = receipt;
  verdict.checks.format = 'ok';

  const key = await input.key(receipt.signingKeyId);
  if (!key) {
    verdict.checks.signature = 'unknown_key';
    verdict.problems.push({
      code: 'UNKNOWN_KEY_ID',
      field: 'signingKeyId',
      message: `unknown key id: ${receipt.signingKeyId} is not a receipt key of this gateway, so the receipt was not issued by it or its signingKeyId was changed`,
    });
  } else {
    const signed = (pem: string) => verifyObject(pem, receipt as unknown as Record<string, unknown>);
    const { refetch, ...cached } = key;
    let used = cached;
    let valid = signed(key.publicKeyPem);
    let unconfirmed: string | undefined;
    if (!valid && refetch) {
      // the cached key may be the one at fault: ask the gateway once more before blaming the receipt
      try {
        const fresh = await refetch();
        if (fresh) {
          used = { ...cached, publicKeyPem: fresh.publicKeyPem, from: fresh.from };
          valid = signed(fresh.publicKeyPem);
        }
      } catch (e) {
        const failure = networkFailure(e);
        if (!failure) throw e;
        unconfirmed = failure.cause;
      }
    }
    verdict.key = { keyId: receipt.signingKeyId, ...used };
    if (valid) verdict.checks.signature = 'valid';
    else {
      verdict.checks.signature = 'mismatch';
      verdict.problems.push({
        code: 'SIGNATURE_MISMATCH',
        field: 'signature',
        message: unconfirmed
          ? `the signature does not match the cached receipt key ${receipt.signingKeyId}, and the gateway could not be reached to fetch that key again (${unconfirmed}): the receipt was changed after it was signed, or the key cache (receipt-keys.json in the config dir) is damaged; verify again when the gateway is reachable`
          : `the signature does not match: the receipt was changed after it was signed, or was not signed with the receipt key ${receipt.signingKeyId}`,
      });
    }
  }

  if (input.response) {
    const { bytes, name } = input.response;
    if (receipt.responseHash === null) {
      verdict.checks.responseHash = 'absent';
      verdict.problems.push({ code: 'RESPONSE_HASH_ABSENT', field: 'responseHash', message: `the receipt covers no response (responseHash is null: a failed call), so it does not vouch for ${name}` });
    } else {
      const actual = await responseHash(bytes);
      if (actual === receipt.responseHash) verdict.checks.responseHash = 'match';
      else {
        verdict.checks.responseHash = 'mismatch';
        verdict.problems.push({
          code: 'RESPONSE_HASH_MISMATCH',
          field: 'responseHash',
          message: `response hash mismatch: ${name} hashes to ${actual}, the receipt covers ${receipt.responseHash}; the bytes differ (the body must be saved exactly as received: no reformatting, no added newline)`,
        });
      }
    }
  }
  verdict.valid = verdict.problems.length === 0;
  return verdict;
}

/** A receipt fetched by id, as a verification input; a missing one says how to find it. */
export async function fetchReceipt(client: AgentpayClient, id: string): Promise<unknown> {
  try {
    return await client.receipts.get(id);
  } catch (e) {
    if (e instanceof AgentpayError && e.status === 404) {
      throw new CliError(e.code, e.message, { tryNext: 'list the receipts this key can see: agentpay receipts list', details: { receiptId: id, status: 404 } });
    }
    throw e;
  }
}

// ---- how a person sees it ----

const SIGNATURE_TEXT: Record<Verdict['checks']['signature'], string> = {
  valid: 'valid',
  mismatch: 'DOES NOT MATCH',
  unknown_key: 'UNKNOWN KEY ID',
  not_checked: 'not checked',
};

export function verdictText(v: Verdict): string {
  const name = v.receipt?.id ?? v.source;
  const keyFrom = v.key ? (v.key.from === 'file' ? '--public-key' : v.key.from === 'cache' ? 'cached' : `fetched from ${v.key.baseUrl}`) : '';
  const sig = SIGNATURE_TEXT[v.checks.signature] + (v.key ? ` (receipt key ${v.key.keyId}, ${keyFrom})` : v.receipt ? ` (${v.receipt.signingKeyId})` : '');
  const hash = { match: 'matches the response', mismatch: 'DOES NOT MATCH the response', absent: 'NONE (the receipt covers no response)', not_checked: 'not checked (pass --response FILE)' }[v.checks.responseHash];
  const lines = [
    `receipt ${name}: ${v.valid ? 'valid' : 'NOT VALID'}`,
    renderFields([
      ['format', v.checks.format === 'ok' ? 'ok' : 'MALFORMED'],
      ['signature', sig],
      ['response hash', hash],
      ...(v.receipt ? ([['amount', `${v.receipt.amount.amountMinor} ${v.receipt.amount.currency} minor units, ${v.receipt.status}`], ['wallet', v.receipt.consumerId], ['capability', v.receipt.capabilityId]] as const) : []),
    ]).replace(/^/gm, '  '),
  ];
  if (v.problems.length) lines.push('', ...v.problems.map((p) => `${p.code}: ${p.message}`));
  return lines.join('\n');
}
