/**
 * The response hash computed synchronously with node:crypto, for Node code that cannot wait
 * (benchmarks, tests). The seller core uses WebCrypto's (protocol.ts `responseHash`) so that it
 * runs outside Node too; both give the same `sha256:<hex>`.
 */
import { createHash } from 'node:crypto';

/** sha256:<hex> of the exact bytes, synchronously (Node only); protocol.ts has the WebCrypto one. */
export function responseHashSync(body: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}
