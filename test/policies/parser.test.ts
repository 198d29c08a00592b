import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lintPolicyDocument, MAX_CONDITION_NESTING, MAX_DOCUMENT_CHARS, parsePolicyDocument, PolicyParseError, type Condition, type ParsedSection } from '../../src/domain/policies/language/index.js';
import { FIXTURE_NAMES, policyFixture } from './helpers.js';

/** The condition of the only rule of a one-section, one-rule deny document. */
function condition(rule: string): Condition {
  const [section] = parsePolicyDocument(`deny:\n  ${rule}\n`).sections;
  expect(section?.type).toBe('deny');
  const r = section!.rules[0]!;
  if (r.kind !== 'condition') throw new Error('expected a condition rule');
  return r.condition;
}

/** The error a document is rejected with. */
function rejection(text: string): PolicyParseError {
  try {
    parsePolicyDocument(text);
  } catch (e) {
    expect(e).toBeInstanceOf(PolicyParseError);
    return e as PolicyParseError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be rejected`);
}

describe('parsePolicyDocument: sections', () => {
  it('reads each header type, an optional quoted name, and indented rules; one section per header', () => {
    const doc = parsePolicyDocument([
      'approval "big purchases":',
      '  price > 500',
      'deny:',
      '  category == "gambling"',
      '  provider == "prv_bad"',
      'allow "rest only":',
      '  protocol == "rest"',
      'budget:',
      '  per agent 2000 per day',
      '  per workspace 10_000 per day',
    ].join('\n'));
    expect(doc.sections.map((s) => [s.type, s.name, s.line, s.rules.map((r) => r.text)])).toEqual([
      ['approval', 'big purchases', 1, ['price > 500']],
      ['deny', undefined, 3, ['category == "gambling"', 'provider == "prv_bad"']],
      ['allow', 'rest only', 6, ['protocol == "rest"']],
      ['budget', undefined, 8, ['per agent 2000 per day', 'per workspace 10_000 per day']],
    ]);
    expect(doc.sections[3]!.rules).toEqual([
      { kind: 'ceiling', text: 'per agent 2000 per day', line: 9, scope: 'agent', limitMinor: 2000n, period: 'day' },
      { kind: 'ceiling', text: 'per workspace 10_000 per day', line: 10, scope: 'workspace', limitMinor: 10_000n, period: 'day' },
    ]);
  });

  it('allows comments on their own lines and after rules and headers, blank lines, CRLF and a byte order mark', () => {
    const text = '\uFEFF# top comment\r\n\r\ndeny "x":  # why\r\n  # inside\r\n  price > 5   # trailing # still comment\r\n\r\n';
    const [s] = parsePolicyDocument(text).sections;
    expect(s).toMatchObject({ type: 'deny', name: 'x', rules: [{ text: 'price > 5', line: 5 }] });
  });

  it('keeps a "#" inside quoted text, and the escapes \\" and \\\\', () => {
    expect(condition('category == "a # b"')).toEqual({ kind: 'text', field: 'category', op: '==', value: 'a # b' });
    expect(condition('agent == "say \\"hi\\" \\\\o/"')).toEqual({ kind: 'text', field: 'agent', op: '==', value: 'say "hi" \\o/' });
  });

  it('continues a rule on lines indented deeper than it, joining their text', () => {
    const [s] = parsePolicyDocument('deny:\n  category == "a"\n    or category == "b"   # two\n      or price > 9\n  price > 100\n').sections;
    expect(s!.rules.map((r) => [r.line, r.text])).toEqual([[2, 'category == "a" or category == "b" or price > 9'], [5, 'price > 100']]);
  });

  it("keeps each section's source: the comment lines right above its header (no blank line between), the header and its rules", () => {
    const doc = parsePolicyDocument('# file header\n\n# about deny\ndeny:\n  price > 5\n  # inside\n\n# above allow\nallow:\n  always\n# after\n');
    expect(doc.sections.map((s) => s.source)).toEqual(['# about deny\ndeny:\n  price > 5', '# above allow\nallow:\n  always']);
  });

  it('makes three sections of the three-section fixture, and parses every fixture', () => {
    const doc = parsePolicyDocument(policyFixture('research-team.policy'));
    expect(doc.sections.map((s: ParsedSection) => [s.type, s.name, s.rules.length])).toEqual([['deny', 'off limits', 1], ['approval', 'big or beta', 2], ['budget', 'daily', 1]]);
    expect(doc.sections[1]!.rules[1]!.text).toBe('protocol == "mcp" and tag "beta"');
    for (const name of FIXTURE_NAMES) expect(lintPolicyDocument(policyFixture(name)), name).toEqual({ ok: true, errors: [] });
  });
});

describe('parsePolicyDocument: conditions', () => {
  it('compares price with every operator, and amounts may group digits with underscores', () => {
    for (const op of ['==', '!=', '<', '<=', '>', '>='] as const) expect(condition(`price ${op} 1_000`)).toEqual({ kind: 'price', op, value: 1000n });
    expect(condition('price in [100, 200,]')).toEqual({ kind: 'priceIn', negated: false, values: [100n, 200n] });
    expect(condition('price not in [0]')).toEqual({ kind: 'priceIn', negated: true, values: [0n] });
  });

  it('compares the text fields with ==, !=, in and not in', () => {
    expect(condition('capability == "cap_1"')).toEqual({ kind: 'text', field: 'capability', op: '==', value: 'cap_1' });
    expect(condition('provider != "prv_1"')).toEqual({ kind: 'text', field: 'provider', op: '!=', value: 'prv_1' });
    expect(condition('wallet == "wal_1"')).toEqual({ kind: 'text', field: 'wallet', op: '==', value: 'wal_1' });
    expect(condition('protocol == "mcp"')).toEqual({ kind: 'text', field: 'protocol', op: '==', value: 'mcp' });
    expect(condition('category in ["a", "b"]')).toEqual({ kind: 'textIn', field: 'category', negated: false, values: ['a', 'b'] });
    expect(condition('agent not in ["intern"]')).toEqual({ kind: 'textIn', field: 'agent', negated: true, values: ['intern'] });
  });

  it('tests tags: one tag, any of a list, none of a list', () => {
    expect(condition('tag "beta"')).toEqual({ kind: 'tag', negated: false, values: ['beta'] });
    expect(condition('tag in ["beta", "alpha"]')).toEqual({ kind: 'tag', negated: false, values: ['beta', 'alpha'] });
    expect(condition('tag not in ["beta"]')).toEqual({ kind: 'tag', negated: true, values: ['beta'] });
  });

  it('binds not tighter than and, and tighter than or; parentheses group; always matches all', () => {
    const p = (v: bigint) => ({ kind: 'price', op: '>', value: v });
    expect(condition('price > 1 or price > 2 and not price > 3')).toEqual({
      kind: 'or', operands: [p(1n), { kind: 'and', operands: [p(2n), { kind: 'not', operand: p(3n) }] }],
    });
    expect(condition('(price > 1 or price > 2) and price > 3')).toEqual({ kind: 'and', operands: [{ kind: 'or', operands: [p(1n), p(2n)] }, p(3n)] });
    expect(condition('not (tag "a" or tag "b")')).toEqual({ kind: 'not', operand: { kind: 'or', operands: [{ kind: 'tag', negated: false, values: ['a'] }, { kind: 'tag', negated: false, values: ['b'] }] } });
    expect(condition('always')).toEqual({ kind: 'always' });
  });
});

describe('parsePolicyDocument: malformed documents', () => {
  // [document, line, column, text the expectation contains]
  const CASES: [string, string, number, number, string][] = [
    ['empty document', '', 1, 1, 'a section header'],
    ['comments only', '# nothing here\n', 1, 1, 'a section header'],
    ['unknown section type', 'aproval:\n  price > 5\n', 1, 1, 'a section header: approval, deny, allow or budget'],
    ['header without colon', 'deny\n  price > 5\n', 1, 5, '":" or a name'],
    ['unquoted name', 'deny big:\n  price > 5\n', 1, 6, '":" or a name'],
    ['text after the header', 'deny: price > 5\n', 1, 7, 'the end of the header line'],
    ['header without rules', 'deny:\nallow:\n  always\n', 2, 1, 'an indented rule under the header on line 1'],
    ['header at the end', 'allow:\n  always\ndeny:\n', 4, 1, 'an indented rule under the header on line 3'],
    ['rule before any header', '  price > 5\n', 1, 3, 'a section header at column 1'],
    ['rule not indented', 'deny:\nprice > 5\n', 2, 1, 'a section header'],
    ['tab indentation', 'deny:\n\tprice > 5\n', 2, 1, 'spaces for indentation'],
    ['inconsistent indentation', 'deny:\n    price > 5\n  price > 6\n', 3, 3, 'a rule indented by 4 spaces'],
    ['decimal amount', 'approval:\n  price > 5.00\n', 2, 11, 'an integer amount in minor units'],
    ['amount with a unit', 'approval:\n  price > 5usd\n', 2, 12, 'a space after the amount'],
    ['negative amount', 'deny:\n  price < -1\n', 2, 11, 'never negative'],
    ['leading zero', 'deny:\n  price > 0500\n', 2, 11, 'without leading zeros'],
    ['bad underscore', 'deny:\n  price > 1__0\n', 2, 11, 'an underscore only between digits'],
    ['quoted price', 'deny:\n  price > "5"\n', 2, 11, 'an amount in minor units'],
    ['missing operator', 'deny:\n  price 5\n', 2, 9, 'a comparison after price'],
    ['single equals', 'deny:\n  category = "x"\n', 2, 12, '"=="'],
    ['ordering a text field', 'deny:\n  category > "x"\n', 2, 12, '"==", "!=", "in" or "not in" after category'],
    ['unquoted text', 'deny:\n  category == gambling\n', 2, 15, 'text in double quotes'],
    ['single quotes', "deny:\n  category == 'x'\n", 2, 15, 'double quotes'],
    ['unclosed text', 'deny:\n  category == "x\n', 2, 17, 'a closing quote'],
    ['unknown escape', 'deny:\n  category == "a\\nb"\n', 2, 17, 'an escape'],
    ['empty text', 'deny:\n  category == ""\n', 2, 15, 'a non-empty category value'],
    ['unknown protocol', 'allow:\n  protocol == "grpc"\n', 2, 15, '"rest" or "mcp"'],
    ['provider without prefix', 'deny:\n  provider == "acme"\n', 2, 15, 'a provider id such as "prv_…"'],
    ['capability without prefix', 'deny:\n  capability in ["cap_1", "x"]\n', 2, 27, 'a capability id'],
    ['wallet without prefix', 'deny:\n  wallet == "w1"\n', 2, 13, 'a wallet id'],
    ['unknown field', 'deny:\n  prize > 5\n', 2, 3, 'a condition'],
    ['tags instead of tag', 'deny:\n  tags "beta"\n', 2, 3, 'a condition'],
    ['tag compared with ==', 'deny:\n  tag == "beta"\n', 2, 7, 'a tag in double quotes'],
    ['dangling and', 'deny:\n  price > 5 and\n', 2, 16, 'a condition'],
    ['two conditions without and/or', 'deny:\n  price > 5 price < 9\n', 2, 13, '"and", "or" or the end of the rule'],
    ['symbol operators', 'deny:\n  price > 5 && price < 9\n', 2, 13, 'the word "and"'],
    ['unclosed parenthesis', 'deny:\n  (price > 5 or price < 2\n', 2, 26, '")" to close the "(" at line 2, column 3'],
    ['extra parenthesis', 'deny:\n  price > 5)\n', 2, 12, '"and", "or" or the end of the rule'],
    ['empty list', 'deny:\n  category in []\n', 2, 16, 'at least one value'],
    ['unclosed list', 'deny:\n  category in ["a" "b"]\n', 2, 20, '"," or "]"'],
    ['list without brackets', 'deny:\n  category in "a"\n', 2, 15, '"[" to start a list'],
    ['ceiling in a deny section', 'deny:\n  per agent 5 per day\n', 2, 3, 'a condition'],
    ['condition in a budget section', 'budget:\n  price > 5\n', 2, 3, 'a daily ceiling'],
    ['unknown ceiling scope', 'budget:\n  per team 5 per day\n', 2, 7, '"agent" or "workspace"'],
    ['ceiling without amount', 'budget:\n  per agent per day\n', 2, 13, 'a daily limit in minor units'],
    ['decimal ceiling', 'budget:\n  per agent 20.00 per day\n', 2, 13, 'an integer amount in minor units'],
    ['ceiling per week', 'budget:\n  per agent 5 per week\n', 2, 19, '"day"'],
    ['ceiling with extra words', 'budget:\n  per agent 5 per day please\n', 2, 23, 'the end of the rule'],
    ['error on a continuation line', 'deny:\n  price > 5\n    or price >\n', 3, 15, 'an amount in minor units'],
    ['good sections do not save a bad one', 'allow:\n  always\ndeny:\n  price >> 5\nbudget:\n  per agent 5 per day\n', 4, 10, 'an amount in minor units'],
  ];

  for (const [what, text, line, column, expected] of CASES) {
    it(`rejects the whole document: ${what} (line ${line}, column ${column})`, () => {
      const e = rejection(text);
      expect({ line: e.line, column: e.column }).toEqual({ line, column });
      expect(e.expected).toContain(expected);
      expect(e.message).toMatch(new RegExp(`^line ${line}, column ${column}: expected `));
    });
  }

  it('says that amounts are minor units, with the amount to write instead', () => {
    expect(rejection('approval:\n  price > 5.00\n').message).toContain('Amounts are integers in minor units: write 500 for 5.00');
    expect(rejection('budget:\n  per agent 12.5 per day\n').message).toContain('write 1250 for 12.50');
  });

  it('suggests the word that was probably meant', () => {
    expect(rejection('aproval:\n  price > 5\n').message).toContain('Did you mean "approval"?');
    expect(rejection('deny:\n  prize > 5\n').message).toContain('Did you mean "price"?');
    expect(rejection('deny:\n  tags "x"\n').message).toContain('Did you mean "tag"?');
    expect(rejection('deny:\n  per agent 5 per day\n').message).toContain('belong in a budget section');
  });

  it('says where to find the ids a capability or provider rule needs', () => {
    expect(rejection('deny:\n  capability == "summarizer"\n').message).toContain('Capability is matched by id; find ids with agentpay search or POST /v1/discovery/search');
    expect(rejection('deny:\n  provider == "acme"\n').message).toContain('Provider is matched by id; find ids with agentpay providers list or GET /v1/providers');
  });

  it('says what it found where a rule was expected under a header', () => {
    expect(rejection('allow:\n  always\ndeny:\n').message).toBe('line 4, column 1: expected an indented rule under the header on line 3, found the end of the document');
    expect(rejection('deny:\nallow:\n  always\n').message).toBe('line 2, column 1: expected an indented rule under the header on line 1, found another section header');
    expect(rejection('deny:  # nothing yet\n\n# later\n').message).toBe('line 2, column 1: expected an indented rule under the header on line 1, found the end of the document');
  });
});

describe('lintPolicyDocument', () => {
  it('is ok with no errors for a good document', () => {
    expect(lintPolicyDocument(policyFixture('budget.policy'))).toEqual({ ok: true, errors: [] });
  });

  it('reports every error it can find, in document order, each with line, column and expected', () => {
    const res = lintPolicyDocument('deny:\n  price > 5.5\n  category == gambling\nallow:\n  always\nbudgt:\n  per agent 5 per day\n  price > 1\n');
    expect(res.ok).toBe(false);
    expect(res.errors.map((e) => [e.line, e.column])).toEqual([[2, 11], [3, 15], [6, 1]]);
    expect(res.errors.every((e) => e instanceof PolicyParseError && e.expected.length > 0)).toBe(true);
    expect(JSON.parse(JSON.stringify(res.errors[0]))).toEqual({ line: 2, column: 11, expected: 'an integer amount in minor units', message: expect.stringContaining('minor units') });
  });

  it('throws the same first error from parsePolicyDocument', () => {
    const text = 'deny:\n  price > x\n  price < y\n';
    const first = lintPolicyDocument(text).errors[0]!;
    expect(rejection(text).message).toBe(first.message);
  });
});

describe('the size of a document', () => {
  /** A valid document of exactly `chars` characters (code points): one deny rule padded with a comment. */
  const sized = (chars: number, pad = 'x') => {
    const head = 'deny:\n  price > 5\n# ';
    return head + pad.repeat(chars - head.length);
  };

  it('accepts up to the gateway limit, counting code points as the API schema does (an emoji is one)', () => {
    expect(lintPolicyDocument(sized(MAX_DOCUMENT_CHARS)).ok).toBe(true);
    expect(lintPolicyDocument(sized(MAX_DOCUMENT_CHARS, '😀')).ok).toBe(true);
  });

  it('refuses one character more at the first character past the limit, saying to split the document', () => {
    const errors = lintPolicyDocument(sized(MAX_DOCUMENT_CHARS + 1)).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 3, column: MAX_DOCUMENT_CHARS - 'deny:\n  price > 5\n'.length + 1 });
    expect(errors[0]!.message).toContain(`expected a document of at most ${MAX_DOCUMENT_CHARS} characters, the most the gateway accepts, found ${MAX_DOCUMENT_CHARS + 1} characters. Split its sections`);
    expect(rejection(sized(MAX_DOCUMENT_CHARS + 1)).message).toBe(errors[0]!.message);
  });

  it('refuses an empty document saying what to write', () => {
    expect(lintPolicyDocument('').errors.map((e) => e.message)).toEqual([
      'line 1, column 1: expected a section header such as "deny:", found an empty document. Write at least one section: a header such as deny "gambling": and a rule indented under it',
    ]);
  });
});

describe('the nesting of a condition', () => {
  const nested = (n: number, open = '(', close = ')') => `deny:\n  ${open.repeat(n)}price > 5${close.repeat(n)}\n`;

  it(`accepts ${MAX_CONDITION_NESTING} levels of parentheses and "not" together`, () => {
    const half = MAX_CONDITION_NESTING / 2;
    const doc = parsePolicyDocument(`deny:\n  ${'not ('.repeat(half)}price > 5${')'.repeat(half)}\n`);
    let c = (doc.sections[0]!.rules[0] as { condition: Condition }).condition;
    let nots = 0;
    while (c.kind === 'not') {
      nots++;
      c = c.operand;
    }
    expect(nots).toBe(half);
    expect(lintPolicyDocument(nested(MAX_CONDITION_NESTING)).ok).toBe(true);
  });

  it('refuses one level more at the "(" or "not" that goes too deep, naming its line and column', () => {
    const paren = rejection(nested(MAX_CONDITION_NESTING + 1));
    expect(paren).toMatchObject({ line: 2, column: 3 + MAX_CONDITION_NESTING });
    expect(paren.message).toBe(`line 2, column ${3 + MAX_CONDITION_NESTING}: expected a condition nested at most ${MAX_CONDITION_NESTING} levels deep (parentheses and "not" together), found "(" at level ${MAX_CONDITION_NESTING + 1}. Write it flatter: "a and b and c" needs no parentheses, and "not not x" is x`);
    const not = rejection(`deny:\n  price > 1 or\n    ${'not '.repeat(MAX_CONDITION_NESTING + 1)}price > 5\n`);
    expect(not).toMatchObject({ line: 3, column: 5 + 4 * MAX_CONDITION_NESTING });
    expect(not.message).toContain(`found "not" at level ${MAX_CONDITION_NESTING + 1}`);
  });

  it('is the limit docs/policy-language.md states', () => {
    const doc = readFileSync(new URL('../../docs/policy-language.md', import.meta.url), 'utf8');
    expect(doc).toContain(`a condition nests at most ${MAX_CONDITION_NESTING} levels deep`);
    expect(doc).toContain(rejection(nested(MAX_CONDITION_NESTING + 1)).message.replace(/^line \d+, column \d+: /, '').replace(/\. Write it.*$/, ''));
  });

  it('answers 8,000 nested parentheses (once a stack overflow) and 15,000 "not" with the same error, in lint too', () => {
    for (const doc of [nested(8000), `deny:\n  ${'not '.repeat(15_000)}always\n`]) {
      const e = rejection(doc);
      expect(e.message).toMatch(new RegExp(`^line 2, column ${3 + (doc.includes('(') ? MAX_CONDITION_NESTING : 4 * MAX_CONDITION_NESTING)}: expected a condition nested at most`));
      const lint = lintPolicyDocument(doc);
      expect(lint.errors.map((x) => x.message)).toEqual([e.message]);
    }
  });
});
