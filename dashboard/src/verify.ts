/**
 * Receipt verification in the page: the receipt key its `signingKeyId` names is fetched from
 * the gateway once (public; keys never change under an id, retired ones stay retrievable),
 * and the signature is checked here with the SDK's own code (src/sdk/signing.ts: WebCrypto
 * Ed25519 where the browser has it, @noble/ed25519 otherwise, strict encodings either way)
 * over the receipt's canonical JSON. A receipt the gateway changed after signing fails here.
 */
import { verifyObject } from '../../packages/sdk/src/signing.js';
import type { Api } from './api.js';
import type { Receipt, ReceiptKey } from './types.js';

export type Verdict = 'valid' | 'invalid' | 'unknown_key';

const keys = new Map<string, Promise<string | null>>();

function receiptKey(a: Api, keyId: string): Promise<string | null> {
  let p = keys.get(keyId);
  if (!p) {
    p = a
      .get<ReceiptKey>(`/v1/platform/receipt-keys/${encodeURIComponent(keyId)}`)
      .then((k) => k.publicKeyPem)
      .catch(() => {
        keys.delete(keyId); // asked again next time: the gateway may have been down
        return null;
      });
    keys.set(keyId, p);
  }
  return p;
}

export async function verifyReceipt(a: Api, receipt: Receipt): Promise<Verdict> {
  const pem = await receiptKey(a, receipt.signingKeyId);
  if (!pem) return 'unknown_key';
  return (await verifyObject(pem, receipt as unknown as Record<string, unknown>)) ? 'valid' : 'invalid';
}
