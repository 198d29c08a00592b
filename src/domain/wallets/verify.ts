/**
 * The ledger's verification (`agentpay ledger verify`, docs/ledger.md): recomputes every wallet's
 * hash chain and running sums, the holds against the open transactions, each resolved transaction
 * against its entries and its signed receipt, and every signed checkpoint against the chains. It
 * reads through the store only, so it runs on either backend, and changes nothing.
 */
import { verifyObject } from '../../core/ed25519.js';
import { entryHash } from '../../store/ledger-chain.js';
import type { LedgerEntry } from '../../store/repos/wallets.js';
import type { Transaction } from '../../store/repos/payments.js';
import type { Store } from '../../store/store.js';
import { receiptView, type ChainLink } from '../payments/receipts.js';
import { checkpointView } from './checkpoints.js';

export interface LedgerProblem {
  walletId?: string;
  entryId?: string;
  seq?: number;
  transactionId?: string;
  receiptId?: string;
  checkpointId?: string;
  problem: string;
}

export interface LedgerReport {
  ok: boolean;
  wallets: number;
  entries: number;
  transactions: number;
  receipts: number;
  checkpoints: number;
  problems: LedgerProblem[];
}

const PAGE = 1000;

export async function verifyLedger(store: Pick<Store, 'read'>): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];
  const keys = new Map((await store.read((r) => r.signingKeys.all())).map((k) => [k.id, k.publicKeyPem]));
  const signedBy = (obj: Record<string, unknown>, keyId: string) => {
    const pem = keys.get(keyId);
    return pem !== undefined && verifyObject(pem, obj);
  };

  // every wallet's chain: seq gap-free from 1, each hash over its fields and the one before, the sums
  const heads = await store.read((r) => r.ledger.heads());
  const chains = new Map<string, LedgerEntry[]>();
  let entryCount = 0;
  for (const { walletId } of heads) {
    const entries: LedgerEntry[] = [];
    for (;;) {
      const page = await store.read((r) => r.ledger.list(walletId, { afterSeq: entries.at(-1)?.seq ?? 0, limit: PAGE }));
      entries.push(...page);
      if (page.length < PAGE) break;
    }
    chains.set(walletId, entries);
    entryCount += entries.length;
    checkChain(walletId, entries, problems);
  }
  const entryAt = (walletId: string, seq: number) => chains.get(walletId)?.find((e) => e.seq === seq);

  // the transactions: their entries, the holds still open, and their receipts
  const openHolds = new Map<string, bigint>();
  let txnCount = 0;
  let receiptCount = 0;
  for (let afterId: string | undefined; ;) {
    const page = await store.read((r) => r.transactions.page({ ...(afterId === undefined ? {} : { afterId }), limit: PAGE }));
    for (const txn of page) {
      txnCount++;
      const [entries, receipts] = await store.read((r) => Promise.all([r.ledger.byTransaction(txn.id), r.receipts.byTransaction(txn.id)]));
      checkTransaction(txn, entries, problems);
      if (txn.status === 'authorized') openHolds.set(txn.walletId, (openHolds.get(txn.walletId) ?? 0n) + txn.amountMinor);
      receiptCount += receipts.length;
      if (txn.status === 'authorized') {
        if (receipts.length > 0) problems.push({ transactionId: txn.id, receiptId: receipts[0]!.id, problem: 'is still authorized but has a receipt' });
        continue;
      }
      const want = txn.status === 'succeeded' ? 'success' : 'failed';
      const receipt = receipts.find((x) => x.status === want);
      if (!receipt) {
        problems.push({ transactionId: txn.id, problem: `is ${txn.status} but has no ${want} receipt` });
        continue;
      }
      const view = receiptView(receipt);
      if (!signedBy(view, receipt.signingKeyId)) problems.push({ transactionId: txn.id, receiptId: receipt.id, problem: `receipt's signature does not verify with platform key ${receipt.signingKeyId}` });
      if (receipt.amountMinor !== (want === 'success' ? chargedOf(txn) : txn.amountMinor) || receipt.currency !== txn.currency || receipt.consumerId !== txn.walletId || receipt.providerId !== txn.providerId || receipt.capabilityId !== txn.capabilityId) {
        problems.push({ transactionId: txn.id, receiptId: receipt.id, problem: 'receipt does not match its transaction (amount, currency, wallet, provider or capability)' });
      }
      for (const link of view.ledger ?? []) checkLink(link, entryAt(link.walletId, link.seq), { transactionId: txn.id, receiptId: receipt.id }, 'receipt', problems);
    }
    if (page.length < PAGE) break;
    afterId = page.at(-1)!.id;
  }
  // and what the open payment sessions still hold: the cap less what was claimed
  for (let afterId: string | undefined; ;) {
    const page = await store.read((r) => r.sessions.pageOpen({ ...(afterId === undefined ? {} : { afterId }), limit: PAGE }));
    for (const s of page) openHolds.set(s.walletId, (openHolds.get(s.walletId) ?? 0n) + s.capMinor - s.claimedMinor);
    if (page.length < PAGE) break;
    afterId = page.at(-1)!.id;
  }
  // what each wallet holds is what its open transactions and sessions hold
  for (const [walletId, entries] of chains) {
    const held = entries.at(-1)?.heldAfter ?? 0n;
    const open = openHolds.get(walletId) ?? 0n;
    if (held !== open) problems.push({ walletId, problem: `holds ${held} but its authorized transactions hold ${open} (open sessions included)` });
  }

  // the signed checkpoints: each head still in its chain, unchanged
  let checkpointCount = 0;
  for (let before: { createdAt: number; id: string } | undefined; ;) {
    const page = await store.read((r) => r.ledgerCheckpoints.list({ limit: PAGE, ...(before ? { before } : {}) }));
    for (const c of page) {
      checkpointCount++;
      const view = checkpointView(c);
      if (!signedBy(view, c.signingKeyId)) {
        problems.push({ checkpointId: c.id, problem: `signature does not verify with platform key ${c.signingKeyId}` });
        continue;
      }
      for (const link of view.heads) checkLink(link, entryAt(link.walletId, link.seq), { checkpointId: c.id }, 'checkpoint', problems);
    }
    if (page.length < PAGE) break;
    before = { createdAt: page.at(-1)!.createdAt, id: page.at(-1)!.id };
  }

  return { ok: problems.length === 0, wallets: chains.size, entries: entryCount, transactions: txnCount, receipts: receiptCount, checkpoints: checkpointCount, problems };
}

/** One wallet's entries by seq: gap-free, each hash linking to the one before, the running sums extended and never negative. */
function checkChain(walletId: string, entries: LedgerEntry[], problems: LedgerProblem[]): void {
  let prev: LedgerEntry | undefined;
  for (const e of entries) {
    const at = { walletId, entryId: e.id, seq: e.seq };
    const expectedSeq = (prev?.seq ?? 0) + 1;
    if (e.seq !== expectedSeq) problems.push({ ...at, problem: `follows entry ${prev?.seq ?? 0}: entries ${expectedSeq} to ${e.seq - 1} are missing` });
    if (e.hash === null) problems.push({ ...at, problem: 'has no hash (written behind the store)' });
    else if (entryHash(e, prev?.hash ?? null) !== e.hash) {
      problems.push({ ...at, problem: "hash does not match the entry's fields and the previous entry's hash: the entry was changed" });
    }
    const balance = (prev?.balanceAfter ?? 0n) + e.amountMinor;
    const held = (prev?.heldAfter ?? 0n) + e.holdMinor;
    if (balance !== e.balanceAfter || held !== e.heldAfter) {
      problems.push({ ...at, problem: `running sums are balance ${e.balanceAfter} and held ${e.heldAfter}, but the entries add up to ${balance} and ${held}` });
    }
    if (e.balanceAfter < 0n || e.heldAfter < 0n || e.balanceAfter - e.heldAfter < 0n) problems.push({ ...at, problem: 'leaves a negative balance, held or available amount' });
    prev = e;
  }
}

/** What a succeeded transaction was charged: a metered call's units × unit price, else the amount held. */
const chargedOf = (txn: Transaction) => txn.chargedMinor ?? txn.amountMinor;

/** A transaction's entries against its status: the hold, then the capture (and a metered call's release of the rest) or the refund. */
function checkTransaction(txn: Transaction, entries: LedgerEntry[], problems: LedgerProblem[]): void {
  const at = { transactionId: txn.id, walletId: txn.walletId };
  const own = entries.filter((e) => e.walletId === txn.walletId);
  const held = own.reduce((s, e) => s + e.holdMinor, 0n);
  const want = txn.status === 'authorized' ? txn.amountMinor : 0n;
  if (held !== want) problems.push({ ...at, problem: `is ${txn.status} and holds ${held} on its wallet; it should hold ${want}` });
  if (txn.status === 'succeeded') {
    // a metered call captures what it was charged and releases the rest of its hold
    const charged = chargedOf(txn);
    const capture = own.find((e) => e.type === 'capture');
    if (!capture || capture.amountMinor !== -charged) problems.push({ ...at, problem: `succeeded but its capture of ${charged} is missing or changed` });
    const released = own.filter((e) => e.type === 'release').reduce((s, e) => s - e.holdMinor, 0n);
    if (released !== txn.amountMinor - charged) problems.push({ ...at, problem: `was charged ${charged} of the ${txn.amountMinor} held but released ${released}, not the rest` });
    const paid = entries.filter((e) => e.type === 'sale' || e.type === 'fee').reduce((s, e) => s + e.amountMinor, 0n);
    if (paid !== charged) problems.push({ ...at, problem: `succeeded for ${charged} but its sale and fee add up to ${paid}` });
    const fee = entries.filter((e) => e.type === 'fee').reduce((s, e) => s + e.amountMinor, 0n);
    if (txn.feeMinor !== null && fee !== txn.feeMinor) problems.push({ ...at, problem: `charged a fee of ${txn.feeMinor} but its fee entry says ${fee}` });
  }
  if ((txn.status === 'failed' || txn.status === 'expired') && !own.some((e) => e.type === 'refund' && e.holdMinor === -txn.amountMinor)) {
    problems.push({ ...at, problem: `is ${txn.status} but its refund of ${txn.amountMinor} is missing or changed` });
  }
}

/** A signed link (a receipt's or a checkpoint's) against the chain's entry at its seq. */
function checkLink(link: ChainLink, entry: LedgerEntry | undefined, where: Omit<LedgerProblem, 'problem'>, what: string, problems: LedgerProblem[]): void {
  const at = { ...where, walletId: link.walletId, seq: link.seq };
  if (!entry) problems.push({ ...at, problem: `entry ${link.seq}, signed in a ${what}, is missing: deleted` });
  else if (entry.hash !== link.hash) problems.push({ ...at, entryId: entry.id, problem: `entry ${link.seq}'s hash differs from the one signed in a ${what}: the chain was rewritten` });
}
