/** The `agentpay receipts` commands' work, and how a person sees receipts. */
import { verifyObject } from '../core/ed25519.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import type { Receipt, ReceiptPage } from 'agentpay-sdk/types';
import { moneyText, renderFields, renderTable } from './output.js';

export interface CheckedReceipt {
  receipt: Receipt;
  /** the platform signature checks out against the receipt key it names */
  signatureValid: boolean;
}

/**
 * One receipt, with its signature checked against the platform key it names (old keys
 * stay retrievable after rotation), so `show` says whether the record can be trusted.
 */
export async function showReceipt(client: AgentpayClient, id: string): Promise<CheckedReceipt> {
  const receipt = await client.receipts.get(id);
  const key = await client.platform.receiptKey(receipt.signingKeyId);
  return { receipt, signatureValid: verifyObject(key.publicKeyPem, receipt as unknown as Record<string, unknown>) };
}

const amount = (r: Receipt) => `${r.amount.amountMinor} ${r.amount.currency}`;

export function receiptFields(r: Receipt, extra: ReadonlyArray<readonly [string, unknown]> = []): string {
  return renderFields([
    ['id', r.id],
    ['status', r.status],
    ['amount', `${amount(r)} minor units`],
    ['capability', r.capabilityId],
    ['provider', r.providerId],
    ['wallet', r.consumerId],
    ['transaction', r.transactionId],
    ['response hash', r.responseHash],
    ['time', r.timestamp],
    ['signing key', r.signingKeyId],
    ...extra,
  ]);
}

/** Newest first, as the gateway returns them, and how to get the next page. */
export function receiptPageText(page: ReceiptPage, limit: number | undefined): string {
  const table = renderTable(page.receipts, [
    { header: 'ID', get: (r) => r.id },
    { header: 'TIME', get: (r) => r.timestamp },
    { header: 'STATUS', get: (r) => r.status },
    { header: 'AMOUNT', get: (r) => moneyText(r.amount.amountMinor, r.amount.currency) },
    { header: 'CAPABILITY', get: (r) => r.capabilityId },
    { header: 'WALLET', get: (r) => r.consumerId },
    { header: 'TRANSACTION', get: (r) => r.transactionId },
  ], '(no receipts)');
  if (!page.nextCursor) return table;
  return `${table}\nnextCursor: ${page.nextCursor}  (next page: agentpay receipts list --after ${page.nextCursor}${limit ? ` --limit ${limit}` : ''})`;
}
