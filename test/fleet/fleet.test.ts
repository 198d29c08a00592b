/**
 * A fleet: three gateway processes on one PostgreSQL database (and one shared data directory:
 * signing keys and the TLS CA), requests spread over them. Runs when AGENTPAY_TEST_DATABASE_URL
 * is set. Proves what instances must not do twice: overdraw a wallet, charge one proof twice,
 * run the sweeper or the rail job on two instances at once; and that a killed instance's
 * duties are taken over by another.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateEd25519, signObject } from '../../src/core/ed25519.js';
import type { DevCredentials } from '../../src/gateway/dev-credentials.js';
import { AgentpayClient } from '../../packages/sdk/src/client/index.js';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { createTestDatabase, pgEnabled, type TestDatabase } from '../helpers/pg.js';
import { until } from '../helpers/wait.js';
import { newCapability, newTenant, startInstance } from './helpers.js';
import { signProof, type Buyer } from '../payments/helpers.js';

const TICK_MS = 150;

interface Instance {
  child: ChildProcess;
  baseUrl: string;
  pid: number;
}

let db: TestDatabase;
let dataDir: string;
let store: PgStore;
let ca: string;
let creds: DevCredentials;
const instances: Instance[] = [];
/** duty runs seen, in order: [duty, pid] */
const dutyRuns: Array<[string, number]> = [];

function start(withCreds: boolean): Promise<Instance & { creds?: DevCredentials; caCertPath: string }> {
  return startInstance({ dataDir, database: db.url, tickMs: TICK_MS, withCreds, onDuty: (duty, pid) => dutyRuns.push([duty, pid]) });
}

const client = (i: number, apiKey: string) => new AgentpayClient({ gatewayUrl: instances[i % instances.length]!.baseUrl, ca, apiKey });

async function newSeller(): Promise<{ id: string; apiKey: string; capabilityId: (price: bigint) => Promise<string> }> {
  const { id, apiKey } = await newTenant(store, 'provider', 'Fleet Seller');
  return { id, apiKey, capabilityId: (price) => newCapability(store, id, price) };
}

async function newBuyer(fundMinor: string): Promise<Buyer> {
  const ws = client(0, creds.workspace.apiKey);
  const pair = generateEd25519();
  const w = await ws.wallets.create({ ownerType: 'agent', ownerId: `agent-${Math.random().toString(36).slice(2, 8)}`, publicKeyPem: pair.publicKeyPem });
  await client(1, creds.workspace.apiKey).wallets.fund(w.id, fundMinor);
  return { walletId: w.id, ...pair };
}

/** A seller's settlement wallet. */
async function sellerWallet(providerId: string): Promise<string> {
  return (await store.read((r) => r.tenants.get(providerId)))!.settlementWalletId!;
}

/** The wallet's ledger is gap-free and its running sums are the sums of its entries. */
async function ledgerOf(walletId: string) {
  const entries = await store.read((r) => r.ledger.list(walletId));
  let balance = 0n;
  let held = 0n;
  entries.forEach((e, i) => {
    balance += e.amountMinor;
    held += e.holdMinor;
    expect(e.seq).toBe(i + 1);
    expect([e.balanceAfter, e.heldAfter]).toEqual([balance, held]);
    expect(e.balanceAfter - e.heldAfter >= 0n).toBe(true);
  });
  return { entries, balance, held };
}

describe.skipIf(!pgEnabled())('a fleet of three gateways on one PostgreSQL database', () => {
  beforeAll(async () => {
    db = await createTestDatabase('agentpay_fleet');
    dataDir = mkdtempSync(join(tmpdir(), 'agentpay-fleet-'));
    // the first instance makes the schema, the signing key, the CA and the dev credentials; the others share them
    const first = await start(true);
    creds = first.creds!;
    ca = readFileSync(first.caCertPath, 'utf8');
    instances.push(first, ...(await Promise.all([start(false), start(false)])));
    store = await PgStore.open({ url: db.url });
  }, 240_000); // three processes start under whatever load the machine has

  afterAll(async () => {
    await store?.close();
    await Promise.all(instances.map((i) => new Promise<void>((res) => {
      if (i.child.exitCode !== null || i.child.signalCode !== null) return res();
      i.child.once('exit', () => res());
      i.child.send('stop');
    })));
    await db?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('200 concurrent authorizations over three instances on a wallet funded for 150: exactly 150 succeed', async () => {
    const seller = await newSeller();
    const capabilityId = await seller.capabilityId(1n);
    const buyer = await newBuyer('150');
    const proofs = await Promise.all(Array.from({ length: 200 }, async (_, i) => signProof(await client(i, seller.apiKey).payments.challenge(capabilityId), buyer)));
    const results = await Promise.allSettled(proofs.map((payment, i) => client(i + 1, seller.apiKey).payments.authorize({ capabilityId, payment })));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = new Set(results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as { code: string }).code] : [])));
    expect(ok).toHaveLength(150);
    expect([...refused]).toEqual(['INSUFFICIENT_FUNDS']);
    const ledger = await ledgerOf(buyer.walletId);
    expect([ledger.balance, ledger.held]).toEqual([150n, 150n]);
    expect(ledger.entries.filter((e) => e.type === 'hold')).toHaveLength(150);
    // completed on one instance, its receipt read from another and verified with the platform key
    const txnId = (ok[0] as PromiseFulfilledResult<{ transactionId: string }>).value.transactionId;
    const { receipt } = await client(2, seller.apiKey).payments.complete({ transactionId: txnId, responseHash: `sha256:${'0'.repeat(64)}` });
    const again = await client(0, creds.workspace.apiKey).receipts.get(receipt.id);
    expect(again.id).toBe(receipt.id);
  }, 120_000);

  it('one proof sent to all three instances 50 times at once: one charge, every other answer 409 REPLAY_DETECTED', async () => {
    const seller = await newSeller();
    const capabilityId = await seller.capabilityId(10n);
    const buyer = await newBuyer('1000');
    const proof = signProof(await client(0, seller.apiKey).payments.challenge(capabilityId), buyer);
    const results = await Promise.allSettled(Array.from({ length: 150 }, (_, i) => client(i, seller.apiKey).payments.authorize({ capabilityId, payment: proof })));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refusals = results.flatMap((r) => (r.status === 'rejected' ? [[(r.reason as { status: number }).status, (r.reason as { code: string }).code]] : []));
    expect(refusals).toEqual(Array(149).fill([409, 'REPLAY_DETECTED']));
    const ledger = await ledgerOf(buyer.walletId);
    expect(ledger.entries.filter((e) => e.type === 'hold')).toHaveLength(1);
    expect([ledger.balance, ledger.held]).toEqual([1000n, 10n]);
  }, 120_000);

  it('one session claimed on all three instances 20 times at once, with three vouchers: each increase paid once, the highest wins', async () => {
    const seller = await newSeller();
    const capabilityId = await seller.capabilityId(10n);
    const buyer = await newBuyer('1000');
    const sessionKey = generateEd25519();
    const unsigned = {
      version: 1 as const, type: 'session.open' as const, walletId: buyer.walletId, providerId: seller.id, capabilityId, capMinor: '600', currency: 'USD',
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(), sessionPublicKey: sessionKey.publicKeyPem, nonce: `fleet-${Math.random().toString(36).slice(2)}`,
      signedAt: new Date().toISOString(),
    };
    const { session } = await client(0, seller.apiKey).sessions.open({ open: { ...unsigned, signature: signObject(buyer.privateKeyPem, unsigned) }, sellerPublicKey: generateEd25519().publicKeyPem });
    const voucher = (cumulativeMinor: string, sequence: number) => {
      const v = { sessionId: session.id, cumulativeMinor, sequence, requestHash: `sha256:${'1'.repeat(64)}` };
      return { ...v, signature: signObject(sessionKey.privateKeyPem, v) };
    };
    const vouchers = [voucher('200', 20), voucher('300', 30), voucher('500', 50)];
    const results = (await Promise.all(Array.from({ length: 60 }, (_, i) =>
      client(i, seller.apiKey).sessions.claim([{ sessionId: session.id, voucher: vouchers[i % 3]! }])))).flat();
    // each claim: moved money, or found it claimed already, or below what another claimed first
    for (const r of results) expect([200, 409], JSON.stringify(r)).toContain(r.status);
    const after = await client(1, seller.apiKey).sessions.get(session.id);
    expect(after).toMatchObject({ claimedMinor: '500', lastSequence: 50, feeMinor: '15' });
    const claimed = results.filter((r) => r.status === 200 && (r.body as { status: string }).status === 'claimed');
    const moved = claimed.reduce((sum, r) => sum + BigInt((r.body as { amountMinor: string }).amountMinor), 0n);
    expect(moved).toBe(500n);
    const ledger = await ledgerOf(buyer.walletId);
    expect([ledger.balance, ledger.held]).toEqual([500n, 100n]);
    expect((await ledgerOf(await sellerWallet(seller.id))).balance).toBe(485n);
    await client(2, seller.apiKey).sessions.close(session.id);
    expect((await ledgerOf(buyer.walletId)).held).toBe(0n);
  }, 120_000);

  it('runs the sweeper and the rail job on one instance at a time, and another takes them over when it is killed', async () => {
    const runsOf = (duty: string, from = 0) => dutyRuns.slice(from).filter(([d]) => d === duty).map(([, pid]) => pid);
    await until(() => runsOf('sweeper').length >= 6 && runsOf('rail-jobs').length >= 6, 'six runs of each duty');
    const sweepers = new Set(runsOf('sweeper'));
    const railers = new Set(runsOf('rail-jobs'));
    expect(sweepers.size).toBe(1);
    expect(railers.size).toBe(1);
    // kill -9 the sweeper's instance: its database session ends, and with it the duty's lock
    const victim = instances.find((i) => sweepers.has(i.pid))!;
    const exited = new Promise((res) => victim.child.once('exit', res));
    victim.child.kill('SIGKILL');
    await exited;
    const mark = dutyRuns.length;
    await until(() => runsOf('sweeper', mark).length >= 6 && runsOf('rail-jobs', mark).length >= 6, 'the duties to be taken over');
    const after = new Set(runsOf('sweeper', mark));
    expect(after.size).toBe(1);
    expect(after.has(victim.pid)).toBe(false);
    expect(new Set(runsOf('rail-jobs', mark)).size).toBe(1);
    expect(runsOf('rail-jobs', mark)).not.toContain(victim.pid);
    // the survivors still serve, and see what the killed one wrote
    const alive = instances.filter((i) => i !== victim);
    const wallets = await new AgentpayClient({ gatewayUrl: alive[0]!.baseUrl, ca, apiKey: creds.workspace.apiKey }).wallets.list();
    expect(wallets.length).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
