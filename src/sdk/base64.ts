/**
 * base64 and base64url for the SDK without Node's Buffer (it also runs in browsers and edge
 * runtimes). Table-driven: btoa over a string built with String.fromCharCode cost ~35 µs for
 * a 400-byte header on the gateway's machine, this ~1 µs (docs/performance.md).
 */
const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

function encoder(alphabet: string): (bytes: Uint8Array, pad: boolean) => string {
  const chars = alphabet.split('');
  // two characters per 12 bits: one table lookup per 12 bits instead of per 6
  const pairs: string[] = new Array(4096);
  for (let i = 0; i < 4096; i++) pairs[i] = chars[i >> 6]! + chars[i & 63]!;
  return (bytes, pad) => {
    let out = '';
    const n = bytes.length;
    const whole = n - (n % 3);
    for (let i = 0; i < whole; i += 3) {
      const v = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
      out += pairs[v >> 12]! + pairs[v & 4095]!;
    }
    if (n - whole === 1) {
      const v = bytes[whole]! << 16;
      out += pairs[v >> 12]! + (pad ? '==' : '');
    } else if (n - whole === 2) {
      const v = (bytes[whole]! << 16) | (bytes[whole + 1]! << 8);
      out += pairs[v >> 12]! + chars[(v >> 6) & 63]! + (pad ? '=' : '');
    }
    return out;
  };
}

function decoder(alphabet: string): (text: string) => Uint8Array {
  const values = new Int16Array(128).fill(-1);
  for (let i = 0; i < 64; i++) values[alphabet.charCodeAt(i)] = i;
  return (text) => {
    const n = text.length;
    const out = new Uint8Array(Math.floor((n * 3) / 4));
    let o = 0;
    let acc = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      const v = c < 128 ? values[c]! : -1;
      if (v < 0) throw new Error('not base64');
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[o++] = (acc >> bits) & 255;
      }
    }
    return out.subarray(0, o);
  };
}

const encodeStandard = encoder(STANDARD);
const encodeUrl = encoder(URL_SAFE);
const decodeStandard = decoder(STANDARD);
const decodeUrl = decoder(URL_SAFE);

/** Standard alphabet with padding. */
export function toBase64(bytes: Uint8Array): string {
  return encodeStandard(bytes, true);
}

/** URL-safe alphabet, no padding. */
export function toBase64Url(bytes: Uint8Array): string {
  return encodeUrl(bytes, false);
}

/** Standard alphabet; the caller checks the padding rules it wants. Throws on any other character. */
export function fromBase64(text: string): Uint8Array {
  return decodeStandard(text.replace(/=+$/, ''));
}

/** URL-safe alphabet; trailing padding tolerated. Throws on any other character or an impossible length. */
export function fromBase64Url(text: string): Uint8Array {
  const s = text.replace(/=+$/, '');
  if (s.length % 4 === 1) throw new Error('not base64url');
  return decodeUrl(s);
}
