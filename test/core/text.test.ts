/**
 * The text rule (src/core/text.ts, docs/api/conventions.md § Text) on its own: which characters
 * are refused where, how the refusal names them, and the nesting limit of a walked value.
 */
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, textProblem, unsafeText } from '../../src/core/text.js';

describe('textProblem', () => {
  it('accepts every script, emoji (a surrogate pair), format characters and U+2028', () => {
    for (const s of ['', 'Zürich', '東京', 'مرحبا', '😀 ok', 'a\u200db', 'x\u202ey', 'line\u2028sep', '\ufeffbom', '\uffff']) {
      expect(textProblem(s, true), JSON.stringify(s)).toBeUndefined();
    }
  });

  it('refuses C0 controls, DEL and C1 controls anywhere, naming the first and its position', () => {
    expect(textProblem('ab\u0000', false)).toBe('must not contain control characters (U+0000 at character 3); remove it');
    for (const c of ['\u0001', '\u0008', '\u000b', '\u000c', '\u000e', '\u001f', '\u007f', '\u0080', '\u009f']) {
      expect(textProblem(`x${c}`, false), JSON.stringify(c)).toMatch(/^must not contain control characters \(U\+00[0-9A-F]{2} at character 2\)/);
    }
  });

  it('keeps tab, line feed and carriage return in multi-line text, and refuses them in one line', () => {
    expect(textProblem('a\tb\r\nc', false)).toBeUndefined();
    expect(textProblem('a\tb', true)).toBe('must be one line: tabs and line breaks are refused in this field (U+0009 at character 2)');
    expect(textProblem('ab\n', true)).toMatch(/U\+000A at character 3/);
    expect(textProblem('\r', true)).toMatch(/U\+000D at character 1/);
  });

  it('refuses a lone surrogate, high or low, but not a pair', () => {
    expect(textProblem('\ud83d\ude00', true)).toBeUndefined();
    expect(textProblem('a\ud83d', true)).toBe('must be valid Unicode text: it has a lone surrogate (U+D83D at character 2), half of a character that has no UTF-8 form; send well-formed text');
    expect(textProblem('\ude00a', false)).toMatch(/lone surrogate \(U\+DE00 at character 1\)/);
    expect(textProblem('\ude00\ud83d', false)).toMatch(/U\+DE00/);
  });
});

describe('unsafeText', () => {
  it('walks values and keys at every depth, naming the first refusal by JSON Pointer', () => {
    expect(unsafeText({ a: [1, 'ok', { b: 'x\u0000' }] })).toEqual({ instancePath: '/a/2/b', message: expect.stringMatching(/U\+0000/) });
    expect(unsafeText({ a: { 'k/~\u0007': 1 } })).toEqual({ instancePath: '/a/k~1~0\u0007', message: expect.stringMatching(/^\(a field name\) must not contain control characters \(U\+0007/) });
    expect(unsafeText('\ud800')?.instancePath).toBe('');
    expect(unsafeText({ text: 'multi\nline\tok', n: 1, b: true, z: null })).toBeUndefined();
  });

  it(`accepts ${MAX_NESTING} levels and refuses one more, however deep, without recursing past the limit`, () => {
    const nest = (n: number) => {
      let v: unknown = 'leaf';
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    expect(unsafeText(nest(MAX_NESTING))).toBeUndefined();
    expect(unsafeText(nest(MAX_NESTING + 1))).toEqual({ instancePath: '/0'.repeat(MAX_NESTING), message: `is nested deeper than ${MAX_NESTING} levels of objects and arrays; send a flatter value` });
    expect(unsafeText(nest(1_000_000))?.message).toMatch(/nested deeper/);
  });
});
