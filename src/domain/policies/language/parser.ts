/**
 * The policy language parser (grammar in docs/policy-language.md). A document is
 * sections: a header at column 1 (`deny "gambling":`), then rules indented under it;
 * a line indented deeper than its rule continues that rule. Any error rejects the
 * whole document; `lintPolicyDocument` reports every error it can find, and
 * `parsePolicyDocument` throws the first. Pure: no I/O, so the CLI lints offline.
 */
import { MAX_POLICY_DOCUMENT_CHARS } from 'agentpay-sdk/contract';
import {
  EQUALITY_OPS, ORDER_OPS, POLICY_TYPES, TEXT_FIELDS,
  type CeilingRule, type CompareOp, type Condition, type ConditionRule, type ParsedDocument, type ParsedSection, type PolicyType, type TextField,
} from './ast.js';
import { closest, PolicyParseError } from './errors.js';
import { describeToken, tokenize, type Token } from './lexer.js';

export { PolicyParseError };

/** Id prefixes the text fields that hold ids must carry, so a typo is caught at once. */
const ID_PREFIX: Partial<Record<TextField, { prefix: string; what: string }>> = {
  capability: { prefix: 'cap_', what: 'a capability id' },
  provider: { prefix: 'prv_', what: 'a provider id' },
  wallet: { prefix: 'wal_', what: 'a wallet id' },
};
/** Where to find the ids a field is matched by (commands of docs/cli.md, routes of the spec). */
const ID_HINT: Partial<Record<TextField, string>> = {
  capability: 'capability is matched by id; find ids with agentpay search or POST /v1/discovery/search',
  provider: 'provider is matched by id; find ids with agentpay providers list or GET /v1/providers',
};
const PROTOCOLS = ['rest', 'mcp'];
const CONDITION_START = 'a condition: price, capability, provider, category, protocol, agent, wallet, tag, always, "not" or "("';
const KEYWORDS = ['price', 'tag', 'always', 'not', 'and', 'or', 'in', ...TEXT_FIELDS];
const MAX_NAME = 100;

/**
 * How deeply a condition may nest: parentheses and "not" together. The parser descends once per
 * level, so without a limit a document of a few thousand "(" would overflow the stack.
 */
export const MAX_CONDITION_NESTING = 32;

/** The longest document the gateway accepts: the apply body's `maxLength` (agentpay-sdk/contract, policies.ts). */
export const MAX_DOCUMENT_CHARS = MAX_POLICY_DOCUMENT_CHARS;

/**
 * What the gateway refuses before it reads the document: an empty one, or one over
 * MAX_DOCUMENT_CHARS (reported at the first character past the limit, so one knows where to
 * split). Worded like every parse error, so lint and apply report it as they report those.
 */
export function documentSizeError(text: string): PolicyParseError | undefined {
  if (text === '') {
    return new PolicyParseError({ line: 1, column: 1 }, 'a section header such as "deny:"', 'an empty document', 'write at least one section: a header such as deny "gambling": and a rule indented under it');
  }
  if (text.length <= MAX_DOCUMENT_CHARS) return undefined; // UTF-16 units: never fewer than code points
  const chars = [...text];
  if (chars.length <= MAX_DOCUMENT_CHARS) return undefined;
  // the position as the parser counts it: lines split at CRLF, LF or CR, a leading byte order mark ignored
  const lines = chars.slice(0, MAX_DOCUMENT_CHARS).join('').replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  return new PolicyParseError(
    { line: lines.length, column: lines[lines.length - 1]!.length + 1 },
    `a document of at most ${MAX_DOCUMENT_CHARS} characters, the most the gateway accepts`,
    `${chars.length} characters`,
    'split its sections over several documents and apply each one',
  );
}

/** A rule's tokens across its lines, before it is parsed. */
interface RuleDraft {
  line: number;
  tokens: Token[];
  parts: string[];
  /** a line of it did not tokenize: already reported, not parsed */
  broken: boolean;
  /** just past its last token, where "found the end of the rule" points */
  end: { line: number; column: number };
}

interface SectionDraft {
  type?: PolicyType;
  name?: string;
  headerLine: number;
  firstLine: number;
  lastLine: number;
  ruleIndent?: number;
  rules: RuleDraft[];
}

/** Walks a rule's tokens; every failure names the place and what would have fitted there. */
class Cursor {
  private i = 0;
  private depth = 0;
  constructor(private tokens: Token[], private end: { line: number; column: number }, private endLabel = 'the end of the rule') {}
  peek(k = 0): Token | undefined {
    return this.tokens[this.i + k];
  }
  next(): Token {
    return this.tokens[this.i++]!;
  }
  atEnd(): boolean {
    return this.i >= this.tokens.length;
  }
  isWord(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t?.type === 'word' && t.text === text;
  }
  isSymbol(text: string, k = 0): boolean {
    const t = this.peek(k);
    return t?.type === 'symbol' && t.text === text;
  }
  /** Enters a nested condition at `t` (a "(" or "not"), refusing one past MAX_CONDITION_NESTING there. */
  nest(t: Token): void {
    if (++this.depth <= MAX_CONDITION_NESTING) return;
    throw new PolicyParseError(
      t,
      `a condition nested at most ${MAX_CONDITION_NESTING} levels deep (parentheses and "not" together)`,
      `${describeToken(t)} at level ${this.depth}`,
      'write it flatter: "a and b and c" needs no parentheses, and "not not x" is x',
    );
  }
  unnest(): void {
    this.depth--;
  }
  fail(expected: string, hint?: string): never {
    const t = this.peek();
    throw new PolicyParseError(t ?? this.end, expected, t ? describeToken(t) : this.endLabel, hint);
  }
}

function wordHint(t: Token | undefined, candidates: readonly string[]): string | undefined {
  if (t?.type !== 'word') return undefined;
  const c = closest(t.text, candidates);
  return c && c !== t.text ? `did you mean "${c}"?` : undefined;
}

// ---- conditions ----

function parseCondition(c: Cursor): Condition {
  const cond = parseOr(c);
  if (!c.atEnd()) {
    if (c.isSymbol(')')) c.fail('"and", "or" or the end of the rule', 'this ")" closes no "("');
    c.fail('"and", "or" or the end of the rule', wordHint(c.peek(), ['and', 'or']));
  }
  return cond;
}

function parseOr(c: Cursor): Condition {
  const operands = [parseAnd(c)];
  while (c.isWord('or')) {
    c.next();
    operands.push(parseAnd(c));
  }
  return operands.length === 1 ? operands[0]! : { kind: 'or', operands };
}

function parseAnd(c: Cursor): Condition {
  const operands = [parseUnary(c)];
  while (c.isWord('and')) {
    c.next();
    operands.push(parseUnary(c));
  }
  return operands.length === 1 ? operands[0]! : { kind: 'and', operands };
}

function parseUnary(c: Cursor): Condition {
  if (c.isWord('not')) {
    c.nest(c.next());
    const operand = parseUnary(c);
    c.unnest();
    return { kind: 'not', operand };
  }
  return parsePrimary(c);
}

function parsePrimary(c: Cursor): Condition {
  const t = c.peek();
  if (c.isSymbol('(')) {
    c.nest(c.next());
    const inner = parseOr(c);
    if (!c.isSymbol(')')) c.fail(`")" to close the "(" at line ${t!.line}, column ${t!.column}`, wordHint(c.peek(), ['and', 'or']));
    c.next();
    c.unnest();
    return inner;
  }
  if (t?.type !== 'word') c.fail(CONDITION_START);
  if (t.text === 'always') {
    c.next();
    return { kind: 'always' };
  }
  if (t.text === 'price') {
    c.next();
    return parsePriceTest(c);
  }
  if (t.text === 'tag') {
    c.next();
    return parseTagTest(c);
  }
  if ((TEXT_FIELDS as readonly string[]).includes(t.text)) {
    c.next();
    return parseTextTest(c, t.text as TextField);
  }
  if (t.text === 'tags') c.fail(CONDITION_START, 'did you mean "tag"? (tag "beta", tag in ["a", "b"])');
  if (t.text === 'per') c.fail(CONDITION_START, 'spending ceilings such as "per agent 2000 per day" belong in a budget section');
  c.fail(CONDITION_START, wordHint(t, KEYWORDS));
}

/** `not in` or `in`, when one follows; undefined otherwise. */
function membership(c: Cursor): { negated: boolean } | undefined {
  if (c.isWord('in')) {
    c.next();
    return { negated: false };
  }
  if (c.isWord('not') && c.isWord('in', 1)) {
    c.next();
    c.next();
    return { negated: true };
  }
  return undefined;
}

function compareOp(c: Cursor, allowed: readonly string[]): CompareOp | undefined {
  const t = c.peek();
  if (t?.type === 'symbol' && allowed.includes(t.text)) {
    c.next();
    return t.text as CompareOp;
  }
  return undefined;
}

function amount(c: Cursor, expected: string): bigint {
  const t = c.peek();
  if (t?.type === 'amount') {
    c.next();
    return t.value;
  }
  c.fail(expected, t?.type === 'string' ? 'price is a number of minor units, written without quotes' : undefined);
}

function parsePriceTest(c: Cursor): Condition {
  const op = compareOp(c, [...EQUALITY_OPS, ...ORDER_OPS]);
  if (op) return { kind: 'price', op, value: amount(c, 'an amount in minor units, e.g. 500') };
  const m = membership(c);
  if (m) return { kind: 'priceIn', negated: m.negated, values: list(c, 'amount', () => amount(c, 'an amount in minor units, e.g. 500')) };
  c.fail('a comparison after price: ==, !=, <, <=, >, >=, "in" or "not in"');
}

function parseTextTest(c: Cursor, field: TextField): Condition {
  const expected = `"==", "!=", "in" or "not in" after ${field}`;
  const op = compareOp(c, EQUALITY_OPS);
  if (op) return { kind: 'text', field, op: op as '==' | '!=', value: text(c, field) };
  const m = membership(c);
  if (m) return { kind: 'textIn', field, negated: m.negated, values: list(c, 'value', () => text(c, field)) };
  const t = c.peek();
  if (t?.type === 'symbol' && (ORDER_OPS as readonly string[]).includes(t.text)) c.fail(expected, `only price is compared with <, <=, > and >=`);
  c.fail(expected);
}

function parseTagTest(c: Cursor): Condition {
  const t = c.peek();
  if (t?.type === 'string') return { kind: 'tag', negated: false, values: [text(c, 'tag')] };
  const m = membership(c);
  if (m) return { kind: 'tag', negated: m.negated, values: list(c, 'tag', () => text(c, 'tag')) };
  c.fail('a tag in double quotes (tag "beta"), "in [...]" or "not in [...]"', t?.type === 'symbol' && t.text === '==' ? 'write tag "beta" to test whether the capability has that tag' : undefined);
}

/** A quoted value for a field, checked where the field allows only some values. */
function text(c: Cursor, field: TextField | 'tag'): string {
  const t = c.peek();
  if (t?.type !== 'string') {
    c.fail('text in double quotes, e.g. "…"', t?.type === 'word' ? `write "${t.text}" in double quotes` : t?.type === 'amount' ? `${field} is text: write "${t.text}"` : undefined);
  }
  if (t.value === '') c.fail(`a non-empty ${field === 'tag' ? 'tag' : `${field} value`}`);
  if (field === 'protocol' && !PROTOCOLS.includes(t.value)) c.fail('"rest" or "mcp"', wordHint({ ...t, type: 'word', text: t.value }, PROTOCOLS));
  const id = field === 'tag' ? undefined : ID_PREFIX[field];
  if (id && field !== 'tag' && !t.value.startsWith(id.prefix)) c.fail(`${id.what} such as "${id.prefix}…"`, ID_HINT[field]);
  c.next();
  return t.value;
}

function list<T>(c: Cursor, what: string, item: () => T): T[] {
  const open = c.peek();
  if (!c.isSymbol('[')) c.fail(`"[" to start a list, e.g. ["a", "b"]`);
  c.next();
  if (c.isSymbol(']')) c.fail(`at least one ${what} in the list`);
  const out: T[] = [];
  for (;;) {
    out.push(item());
    if (c.isSymbol(',')) {
      c.next();
      if (c.isSymbol(']')) break; // a trailing comma
      continue;
    }
    if (c.isSymbol(']')) break;
    c.fail(`"," or "]" to close the list opened at column ${open!.column}`);
  }
  c.next();
  return out;
}

// ---- ceilings ----

function parseCeiling(c: Cursor): Pick<CeilingRule, 'scope' | 'limitMinor' | 'period'> {
  if (!c.isWord('per')) {
    const t = c.peek();
    const looksLikeCondition = t?.type === 'word' && [...KEYWORDS, 'tags'].includes(t.text);
    c.fail('a daily ceiling: "per agent" or "per workspace", e.g. per agent 2000 per day', looksLikeCondition ? 'conditions belong in approval, deny or allow sections' : undefined);
  }
  c.next();
  const scopeTok = c.peek();
  if (!c.isWord('agent') && !c.isWord('workspace')) c.fail('"agent" or "workspace" after per', wordHint(scopeTok, ['agent', 'workspace']));
  c.next();
  const limitMinor = amount(c, 'a daily limit in minor units, e.g. 2000');
  if (!c.isWord('per')) c.fail('"per day" after the limit');
  c.next();
  if (!c.isWord('day')) c.fail('"day": budgets count per UTC calendar day', wordHint(c.peek(), ['day']));
  c.next();
  if (!c.atEnd()) c.fail('the end of the rule');
  return { scope: (scopeTok as Token).text as 'agent' | 'workspace', limitMinor, period: 'day' };
}

// ---- sections ----

function parseHeader(tokens: Token[], line: number): { type: PolicyType; name?: string } {
  const last = tokens.at(-1);
  const c: Cursor = new Cursor(tokens, { line, column: last ? last.column + last.text.length : 1 }, 'the end of the line');
  const t = c.peek();
  if (t?.type !== 'word' || !(POLICY_TYPES as readonly string[]).includes(t.text)) {
    const isRule = t?.type === 'word' && [...KEYWORDS, 'per', 'tags'].includes(t.text);
    c.fail('a section header: approval, deny, allow or budget', isRule ? 'rules are indented under a section header' : wordHint(t, POLICY_TYPES));
  }
  c.next();
  let name: string | undefined;
  const n = c.peek();
  if (n?.type === 'string') {
    if (n.value.trim() === '') c.fail('a non-empty name');
    if (n.value.length > MAX_NAME) c.fail(`a name of at most ${MAX_NAME} characters`);
    name = n.value;
    c.next();
  }
  if (!c.isSymbol(':')) c.fail(name === undefined ? '":" or a name in double quotes after the policy type' : '":" at the end of the section header', n?.type === 'word' ? `names are quoted: ${t.text} "${n.text}":` : undefined);
  c.next();
  if (!c.atEnd()) c.fail('the end of the header line', 'rules go on the following lines, indented');
  return { type: t.text as PolicyType, ...(name !== undefined ? { name } : {}) };
}

function parseRule(section: SectionDraft, r: RuleDraft): ConditionRule | CeilingRule {
  const c: Cursor = new Cursor(r.tokens, r.end);
  const base = { text: r.parts.join(' '), line: r.line };
  if (section.type === 'budget') return { kind: 'ceiling', ...base, ...parseCeiling(c) };
  return { kind: 'condition', ...base, condition: parseCondition(c) };
}

function analyse(text: string): { sections: ParsedSection[]; errors: PolicyParseError[] } {
  const size = documentSizeError(text);
  if (text === '') return { sections: [], errors: [size!] };
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\n|\r/);
  const errors: PolicyParseError[] = [];
  const drafts: SectionDraft[] = [];
  let cur: SectionDraft | undefined;
  let commentBlock: number | undefined; // first line of the comment lines right above a header

  lines.forEach((raw, idx) => {
    const no = idx + 1;
    const lead = /^[ \t]*/.exec(raw)![0];
    const rest = raw.slice(lead.length);
    if (rest.trim() === '') {
      commentBlock = undefined;
      return;
    }
    if (rest.startsWith('#')) {
      commentBlock ??= no;
      return;
    }
    const blockStart = commentBlock;
    commentBlock = undefined;
    const tab = lead.indexOf('\t');
    if (tab >= 0) {
      errors.push(new PolicyParseError({ line: no, column: tab + 1 }, 'spaces for indentation', 'a tab', 'tabs are not allowed, so that indentation looks the same in every editor'));
      // the line is a rule (or part of one) that cannot be read: no further error about it
      if (cur?.rules.length) cur.rules[cur.rules.length - 1]!.broken = true;
      else cur?.rules.push({ line: no, tokens: [], parts: [], broken: true, end: { line: no, column: 1 } });
      return;
    }
    const indent = lead.length;
    let tokens: Token[] | undefined;
    try {
      tokens = tokenize(rest, no, indent + 1);
    } catch (e) {
      if (!(e instanceof PolicyParseError)) throw e;
      errors.push(e);
    }
    if (indent === 0) {
      cur = { headerLine: no, firstLine: blockStart ?? no, lastLine: no, rules: [] };
      drafts.push(cur);
      if (tokens) {
        try {
          Object.assign(cur, parseHeader(tokens, no));
        } catch (e) {
          if (!(e instanceof PolicyParseError)) throw e;
          errors.push(e);
        }
      }
      return;
    }
    if (!cur) {
      errors.push(new PolicyParseError({ line: no, column: indent + 1 }, 'a section header at column 1 (approval, deny, allow or budget) before the first rule', tokens?.[0] ? describeToken(tokens[0]) : undefined));
      return;
    }
    const last = tokens?.at(-1);
    const part = last ? raw.slice(indent, last.column - 1 + last.text.length).trim() : rest.trim();
    const end = last ? { line: no, column: last.column + last.text.length } : { line: no, column: raw.length + 1 };
    if (cur.ruleIndent === undefined || indent === cur.ruleIndent) {
      cur.ruleIndent ??= indent;
      cur.rules.push({ line: no, tokens: tokens ?? [], parts: [part], broken: !tokens, end });
    } else if (indent > cur.ruleIndent) {
      const rule = cur.rules[cur.rules.length - 1]!;
      rule.tokens.push(...(tokens ?? []));
      rule.parts.push(part);
      rule.broken ||= !tokens;
      rule.end = end;
    } else {
      errors.push(new PolicyParseError({ line: no, column: indent + 1 }, `a rule indented by ${cur.ruleIndent} spaces like the rules above it, or a section header at column 1`, `an indentation of ${indent}`));
      return;
    }
    cur.lastLine = no;
  });

  const sections: ParsedSection[] = [];
  drafts.forEach((d, k) => {
    if (!d.type) return; // the header's error is reported; its rules cannot be typed
    if (d.rules.length === 0) {
      const nextLine = drafts[k + 1]?.firstLine;
      errors.push(new PolicyParseError({ line: d.headerLine + 1, column: 1 }, `an indented rule under the header on line ${d.headerLine}`, nextLine === d.headerLine + 1 ? 'another section header' : nextLine === undefined ? 'the end of the document' : undefined));
      return;
    }
    const rules: (ConditionRule | CeilingRule)[] = [];
    for (const r of d.rules) {
      if (r.broken) continue;
      try {
        rules.push(parseRule(d, r));
      } catch (e) {
        if (!(e instanceof PolicyParseError)) throw e;
        errors.push(e);
      }
    }
    const source = lines.slice(d.firstLine - 1, d.lastLine).join('\n');
    const head = { line: d.headerLine, source, ...(d.name !== undefined ? { name: d.name } : {}) };
    sections.push(d.type === 'budget'
      ? { type: 'budget', ...head, rules: rules as CeilingRule[] }
      : { type: d.type, ...head, rules: rules as ConditionRule[] });
  });

  if (drafts.length === 0 && errors.length === 0) {
    errors.push(new PolicyParseError({ line: 1, column: 1 }, 'a section header such as "deny:"', 'a document with no sections'));
  }
  if (size) errors.push(size);
  errors.sort((a, b) => a.line - b.line || a.column - b.column);
  return { sections, errors };
}

/**
 * Parses a whole document into its sections (one policy each). Throws the first
 * PolicyParseError: a document with any bad line is rejected whole.
 */
export function parsePolicyDocument(text: string): ParsedDocument {
  const { sections, errors } = analyse(text);
  if (errors.length > 0) throw errors[0]!;
  return { sections };
}

/** Every error of a document that can be found in one pass, in document order. */
export function lintPolicyDocument(text: string): { ok: boolean; errors: PolicyParseError[] } {
  const { errors } = analyse(text);
  return { ok: errors.length === 0, errors };
}
