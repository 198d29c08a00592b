import { describe, expect, it } from 'vitest';
import { CanonicalJsonError, canonicalize, MAX_CANONICAL_DEPTH, signingPayload } from '../../packages/sdk/src/contract/canonical-json.js';

describe('canonicalize', () => {
  it('sorts keys by UTF-16 code units as RFC 8785 §3.2.3 does (emoji before U+FB33)', () => {
    // RFC 8785 §3.2.3's sorting example: the emoji (surrogates D83D DE00) sorts before
    // U+FB33, which code-point order would put the other way round.
    const input = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
      '\u00e9': 'Latin Small Letter E With Acute',
    };
    expect(canonicalize(input)).toBe(
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00e9":"Latin Small Letter E With Acute",' +
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face",' +
        '"\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
  });

  it('sorts at every level, inside arrays too, and keeps array order', () => {
    const out = canonicalize({ b: [{ z: 1, a: { d: null, c: [3, 1, 2] } }, 'x'], a: { y: true, x: false } });
    expect(out).toBe('{"a":{"x":false,"y":true},"b":[{"a":{"c":[3,1,2],"d":null},"z":1},"x"]}');
  });

  it('writes no whitespace, and equal objects give equal bytes whatever their key order', () => {
    const a = canonicalize({ amountMinor: '100', currency: 'USD', nested: { k: [1, { q: 'r', p: 's' }] } });
    const b = canonicalize({ nested: { k: [1, { p: 's', q: 'r' }] }, currency: 'USD', amountMinor: '100' });
    expect(a).toBe(b);
    expect(a).not.toMatch(/\s/);
    expect(canonicalize([])).toBe('[]');
    expect(canonicalize({})).toBe('{}');
    expect(canonicalize([[], {}, [[]]])).toBe('[[],{},[[]]]');
  });

  it('escapes strings exactly as JSON.stringify does (RFC 8785 §3.2.2.2 example)', () => {
    const s = '\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/';
    expect(canonicalize({ string: s })).toBe('{"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
    const every = Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(i)).join('') + '\u2028\u2029é😀';
    expect(canonicalize(every)).toBe(JSON.stringify(every));
    expect(canonicalize({ [every]: every })).toBe(`{${JSON.stringify(every)}:${JSON.stringify(every)}}`);
  });

  it('writes numbers as ECMAScript does (RFC 8785 §3.2.2.3), -0 as 0', () => {
    expect(canonicalize([0, -0, 1, -1.5, 1e21, 1e-7, 0.000001, 333333333.3333333, 9007199254740993])).toBe(
      '[0,0,1,-1.5,1e+21,1e-7,0.000001,333333333.3333333,9007199254740992]',
    );
  });

  it('keeps literals and leaves out object members whose value is undefined, as JSON does', () => {
    expect(canonicalize({ t: true, f: false, n: null, u: undefined })).toBe('{"f":false,"n":null,"t":true}');
    expect(canonicalize(Object.assign(Object.create(null) as object, { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });

  describe('refuses what cannot be signed faithfully', () => {
    const refused: Array<[string, unknown]> = [
      ['NaN', { amount: NaN }],
      ['Infinity', { amount: Infinity }],
      ['-Infinity', [-Infinity]],
      ['a lone high surrogate in a value', { s: 'a\ud800b' }],
      ['a lone low surrogate in a value', ['\udc00']],
      ['a high surrogate at the end of a value', 'abc\ud83d'],
      ['two high surrogates then a low one', '\ud83d\ud83d\ude00'],
      ['a lone surrogate in a key', { 'k\udfff': 1 }],
      ['a lone surrogate in a nested key', { a: [{ '\ud800': 1 }] }],
      ['a bigint', { amountMinor: 100n }],
      ['a function', { f: () => 1 }],
      ['a symbol', { s: Symbol('x') }],
      ['a top-level undefined', undefined],
      ['undefined in an array', [1, undefined, 3]],
      ['a hole in a sparse array', [1, , 3]],
      ['a class instance', { when: new Date(0) }],
      ['a Map', { m: new Map([['a', 1]]) }],
      ['a boxed string', { s: new String('x') }],
      ['a typed array', { b: new Uint8Array([1]) }],
      ['an object with its own class', { x: new (class Money { minor = '1'; })() }],
    ];
    it.each(refused)('%s', (_name, value) => {
      expect(() => canonicalize(value)).toThrow(CanonicalJsonError);
    });

    it('names where the bad value is', () => {
      expect(() => canonicalize({ a: [{ b: NaN }] })).toThrow('$.a[0].b');
    });
  });
});

describe('the nesting of a signed value', () => {
  const nest = (n: number, leaf: unknown = 1): unknown => {
    let v = leaf;
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };

  it(`signs ${MAX_CANONICAL_DEPTH} levels of objects and arrays`, () => {
    expect(canonicalize(nest(MAX_CANONICAL_DEPTH))).toBe(`${'[{"a":'.repeat(MAX_CANONICAL_DEPTH / 2)}1${'}]'.repeat(MAX_CANONICAL_DEPTH / 2)}`);
  });

  it('refuses one level more, naming where, and a hostile 100,000 levels the same way instead of overflowing the stack', () => {
    expect(() => canonicalize(nest(MAX_CANONICAL_DEPTH + 1))).toThrow(CanonicalJsonError);
    expect(() => canonicalize(nest(MAX_CANONICAL_DEPTH + 1))).toThrow(`nested deeper than ${MAX_CANONICAL_DEPTH} levels of objects and arrays`);
    let message = '';
    try {
      canonicalize(nest(100_000));
    } catch (e) {
      expect(e).toBeInstanceOf(CanonicalJsonError);
      message = (e as Error).message;
    }
    expect(message).toMatch(/^\$(\[0\]|\.a)+: nested deeper than/);
    expect(() => signingPayload({ deep: nest(100_000) })).toThrow(CanonicalJsonError);
  });
});

describe('signingPayload', () => {
  it('drops signature and signingKeyId and canonicalizes the rest', () => {
    const signed = { signingKeyId: 'sk_1', nonce: 'n', signature: 'c2ln', amountMinor: '100', currency: 'USD' };
    expect(signingPayload(signed)).toBe('{"amountMinor":"100","currency":"USD","nonce":"n"}');
    expect(signingPayload(signed)).toBe(signingPayload({ amountMinor: '100', nonce: 'n', currency: 'USD' }));
  });

  it('keeps nested fields called signature: only the top-level ones are the envelope', () => {
    expect(signingPayload({ inner: { signature: 'x' }, signature: 'y' })).toBe('{"inner":{"signature":"x"}}');
  });

  it('leaves the object it is given untouched', () => {
    const obj = { a: 1, signature: 's', signingKeyId: 'k' };
    signingPayload(obj);
    expect(obj).toEqual({ a: 1, signature: 's', signingKeyId: 'k' });
  });

  it('refuses a value that is not a plain object instead of signing its copy', () => {
    expect(() => signingPayload(new Date(0) as unknown as Record<string, unknown>)).toThrow(CanonicalJsonError);
    expect(() => signingPayload([1, 2] as unknown as Record<string, unknown>)).toThrow(CanonicalJsonError);
    expect(() => signingPayload(null as unknown as Record<string, unknown>)).toThrow(CanonicalJsonError);
  });

  it('refuses an unsignable value inside the payload', () => {
    expect(() => signingPayload({ amountMinor: 1n, signature: 's' })).toThrow(CanonicalJsonError);
  });
});
