/**
 * docs/policy-language.md cannot drift from the parser: every ```policy block parses,
 * every ```policy-error block is rejected with exactly the message in the ```text block
 * after it, and every sample document of fixtures/policies/ is shown verbatim.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePolicyDocument, PolicyParseError } from '../../src/domain/policies/language/index.js';
import { FIXTURE_NAMES, policyFixture } from './helpers.js';

const DOC = readFileSync(new URL('../../docs/policy-language.md', import.meta.url), 'utf8');

interface Block {
  lang: string;
  text: string;
  /** 1-based line of the opening fence in the markdown */
  line: number;
}

/** The fenced code blocks of a markdown text, in order. */
function codeBlocks(markdown: string): Block[] {
  const out: Block[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) body.push(lines[i]!);
    out.push({ lang: open[1]!, text: `${body.join('\n')}\n`, line: start + 1 });
  }
  return out;
}

const blocks = codeBlocks(DOC);

describe('docs/policy-language.md', () => {
  const examples = blocks.filter((b) => b.lang === 'policy');

  it('has examples of every section type and every field', () => {
    expect(examples.length).toBeGreaterThanOrEqual(10);
    const all = examples.map((b) => b.text).join('\n');
    for (const word of ['approval', 'deny', 'allow', 'budget']) expect(all).toMatch(new RegExp(`^${word}\\b`, 'm'));
    for (const field of ['price', 'capability', 'provider', 'category', 'protocol', 'agent', 'wallet', 'tag', 'always', 'not', 'and', 'or', 'in', 'per workspace']) {
      expect(all, field).toContain(`${field} `);
    }
  });

  for (const b of examples) {
    it(`parses the example at line ${b.line}`, () => {
      expect(() => parsePolicyDocument(b.text)).not.toThrow();
    });
  }

  const errors = blocks.flatMap((b, i) => (b.lang === 'policy-error' ? [{ doc: b, shown: blocks[i + 1] }] : []));

  it('shows error examples, each followed by its message', () => {
    expect(errors.length).toBeGreaterThanOrEqual(10);
    for (const { doc, shown } of errors) expect(shown?.lang, `the block after line ${doc.line}`).toBe('text');
  });

  for (const { doc, shown } of errors) {
    it(`rejects the error example at line ${doc.line} with the message shown`, () => {
      let error: unknown;
      try {
        parsePolicyDocument(doc.text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(PolicyParseError);
      expect((error as PolicyParseError).message).toBe(shown!.text.trim());
    });
  }

  it('shows every sample document of fixtures/policies/ verbatim', () => {
    const texts = new Set(examples.map((b) => b.text));
    for (const name of FIXTURE_NAMES) expect(texts.has(policyFixture(name)), name).toBe(true);
  });

  it('gives a grammar that names every policy type and field the parser knows', () => {
    const ebnf = blocks.find((b) => b.lang === 'ebnf')?.text ?? '';
    for (const word of ['approval', 'deny', 'allow', 'budget', 'price', 'capability', 'provider', 'category', 'protocol', 'agent', 'wallet', 'tag', 'always', 'per', 'day', 'workspace']) {
      expect(ebnf, word).toContain(`"${word}"`);
    }
  });
});
