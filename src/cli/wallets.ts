/**
 * The `agentpay wallets` commands' work: plain inputs in, API results out, plus how a
 * person sees them. Amounts stay the gateway's strings of integer minor units.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { writeFileAtomic } from '../core/files.js';
import { dirname, resolve } from 'node:path';
import { generateEd25519 } from '../core/ed25519.js';
import { parseMinor } from '../core/money.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Balance, LedgerEntry, Wallet } from 'agentpay-sdk/types';
import { AgentpayError } from 'agentpay-sdk/errors';
import { CliError, describeError, usageError } from './errors/index.js';
import { moneyText, renderFields, renderTable } from './output.js';

export interface CreateWalletInput {
  ownerType: 'agent' | 'workspace';
  ownerId: string;
  /** an existing ed25519 public key (PEM) to register */
  publicKeyFile?: string | undefined;
  /** generate a key pair, keep the private key at this path (0600), register the public half */
  generateKeyFile?: string | undefined;
}

export interface CreatedWallet {
  wallet: Wallet;
  /** where the generated private key was written */
  keyFile?: string;
}

export async function createWallet(client: AgentpayClient, input: CreateWalletInput): Promise<CreatedWallet> {
  if (input.publicKeyFile && input.generateKeyFile) throw usageError('pass either --public-key-file or --generate-key, not both');
  if (input.publicKeyFile) {
    const publicKeyPem = readPublicKeyFile(resolve(input.publicKeyFile));
    return { wallet: await client.wallets.create({ ownerType: input.ownerType, ownerId: input.ownerId, publicKeyPem }) };
  }
  if (input.generateKeyFile) {
    const keyFile = resolve(input.generateKeyFile);
    if (existsSync(keyFile)) {
      throw new CliError('KEY_FILE_EXISTS', `${keyFile} already exists; agentpay never overwrites a key file`, {
        tryNext: 'choose another --key-file path',
        details: { keyFile },
      });
    }
    const pair = generateEd25519();
    // exclusive: fails if the file appeared meanwhile; 0600 because it is the agent's spending key;
    // synced before its public half is registered, so a registered key is never lost to a crash
    try {
      writeFileAtomic(keyFile, pair.privateKeyPem, { mode: 0o600, exclusive: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw keyFileProblem(keyFile, e);
      throw new CliError('KEY_FILE_EXISTS', `${keyFile} already exists; agentpay never overwrites a key file`, { tryNext: 'choose another --key-file path', details: { keyFile } });
    }
    try {
      const wallet = await client.wallets.create({ ownerType: input.ownerType, ownerId: input.ownerId, publicKeyPem: pair.publicKeyPem });
      return { wallet, keyFile };
    } catch (e) {
      // a key whose public half was never registered is of no use to anyone; but without a
      // definite refusal (no answer, a 5xx) the gateway may have registered it: the key stays
      if (e instanceof AgentpayError && e.status !== undefined && e.status >= 400 && e.status < 500) {
        rmSync(keyFile, { force: true });
        throw e;
      }
      throw keyKept(e, keyFile, input.ownerId, client.http.gatewayUrl);
    }
  }
  if (input.ownerType === 'agent') {
    throw usageError('an agent wallet needs a public key: pass --generate-key --key-file PATH, or --public-key-file PATH', undefined, { flag: '--generate-key' });
  }
  return { wallet: await client.wallets.create({ ownerType: input.ownerType, ownerId: input.ownerId }) };
}

/** The error of a wallet create whose outcome is unknown, saying where the generated key is. */
function keyKept(e: unknown, keyFile: string, ownerId: string, baseUrl: string): CliError {
  const r = describeError(e, { baseUrl });
  return new CliError(r.code, `${r.message}; the private key is kept at ${keyFile}`, {
    exit: r.exit,
    tryNext: `the gateway may have created the wallet anyway: look for owner ${ownerId} in agentpay wallets list; if it is there, ${keyFile} is its key; if not, create it again with another --key-file`,
    details: { ...r.details, keyFile },
  });
}

/** A --key-file that cannot be written: the missing directory or the file in the way, named. */
function keyFileProblem(keyFile: string, e: unknown): unknown {
  const code = (e as NodeJS.ErrnoException).code;
  const bad = (problem: string, tryNext: string) => usageError(`--key-file: ${problem}`, tryNext, { flag: '--key-file', keyFile });
  if (code === 'ENOENT') return bad(`the directory ${dirname(keyFile)} does not exist`, `create it first (mkdir -p ${dirname(keyFile)}), or choose another path`);
  if (code === 'ENOTDIR') {
    let file = dirname(keyFile);
    while (dirname(file) !== file && !(existsSync(file) && !statSync(file).isDirectory())) file = dirname(file);
    return bad(`${file} is not a directory`, 'choose a path in a directory');
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return bad(`cannot write in ${dirname(keyFile)} (${code})`, 'choose a path in a directory you can write to');
  return e;
}

/** --public-key-file's PEM, or a usage error naming the flag; the gateway checks the key itself. */
function readPublicKeyFile(path: string): string {
  const bad = (problem: string) => usageError(`--public-key-file: ${path} ${problem}`, 'pass the ed25519 public key (PEM, "-----BEGIN PUBLIC KEY-----") to register', { flag: '--public-key-file' });
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (e as Error).message})`);
  }
}

/** `--amount` as typed: integer minor units only ("150" is 1.50; "1.50" is refused, never rounded). */
export function parseAmountFlag(value: string): string {
  return parseMinor(value, '--amount').toString();
}

export async function fundWallet(client: AgentpayClient, walletId: string, amount: string, rail?: string): Promise<{ entry: LedgerEntry; balance: Balance }> {
  return client.wallets.fund(walletId, parseAmountFlag(amount), rail);
}

// ---- how a person sees wallets ----

export function walletFields(w: Wallet, extra: ReadonlyArray<readonly [string, unknown]> = []): string {
  return renderFields([
    ['id', w.id],
    ['owner', `${w.ownerType} ${w.ownerId}`],
    ['status', w.frozen ? `${w.status} (frozen)` : w.status],
    ['currency', w.currency],
    ...(w.balance ? ([['balance', w.balance.balanceMinor], ['available', w.balance.availableMinor]] as const) : []),
    ['public key', w.publicKeyPem ? 'registered' : 'none'],
    ['created', w.createdAt],
    ...extra,
  ]);
}

export function walletTable(wallets: readonly Wallet[]): string {
  return renderTable(wallets, [
    { header: 'ID', get: (w) => w.id },
    { header: 'OWNER TYPE', get: (w) => w.ownerType },
    { header: 'OWNER', get: (w) => w.ownerId },
    { header: 'STATUS', get: (w) => w.status },
    { header: 'FROZEN', get: (w) => (w.frozen ? 'yes' : 'no') },
    { header: 'CURRENCY', get: (w) => w.currency },
    { header: 'CREATED', get: (w) => w.createdAt },
  ], '(no wallets)');
}

export function balanceFields(b: Balance): string {
  return renderFields([
    ['balance', `${b.balanceMinor} ${b.currency} minor units`],
    ['available', `${b.availableMinor} ${b.currency} minor units`],
  ]);
}

export function ledgerTable(entries: readonly LedgerEntry[]): string {
  return renderTable(entries, [
    { header: 'SEQ', get: (e) => e.seq },
    { header: 'TYPE', get: (e) => e.type },
    { header: 'AMOUNT', get: (e) => moneyText(e.amountMinor, e.currency) },
    { header: 'HOLD', get: (e) => moneyText(e.holdMinor, e.currency) },
    { header: 'BALANCE AFTER', get: (e) => moneyText(e.balanceAfterMinor, e.currency) },
    { header: 'TRANSACTION', get: (e) => e.transactionId },
    { header: 'CREATED', get: (e) => e.createdAt },
    { header: 'MEMO', get: (e) => e.memo },
  ], '(no entries)');
}
