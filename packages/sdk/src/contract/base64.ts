/**
 * base64 and base64url for the SDK without Node's Buffer (it also runs in browsers and edge
 * runtimes). Encoding is table-driven: btoa over a string of String.fromCharCode took 32 to
 * 50 µs for a header of 400 to 500 bytes on the gateway's machine, this 3 to 7 µs
 * (bench/base64.ts). Decoding stays with atob, native and as fast as anything written here.
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

/** atob (native everywhere) after a check of the alphabet, which atob would partly forgive. */
function decode(text: string, alphabet: RegExp, toStandard: (s: string) => string): Uint8Array {
  if (!alphabet.test(text) || text.length % 4 === 1) throw new Error('not base64');
  const binary = atob(toStandard(text));
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const encodeStandard = encoder(STANDARD);
const encodeUrl = encoder(URL_SAFE);

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
  return decode(text.replace(/=+$/, ''), /^[A-Za-z0-9+/]*$/, (t) => t);
}

/** URL-safe alphabet; trailing padding tolerated. Throws on any other character or an impossible length. */
export function fromBase64Url(text: string): Uint8Array {
  return decode(text.replace(/=+$/, ''), /^[A-Za-z0-9_-]*$/, (t) => t.replace(/-/g, '+').replace(/_/g, '/'));
}
