/**
 * Tables align by display width, not by UTF-16 length: a capability named with CJK characters,
 * an emoji, combining marks or a flag takes as many terminal columns as a terminal gives it, and
 * the columns after it start at the same column on every row. Control characters in a cell are
 * shown escaped, so a name cannot break a row or drive the terminal. Plain functions, no gateway.
 */
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { padDisplay, renderFields, renderTable } from '../../../src/cli/output.js';
import { searchTable } from '../../../src/cli/search.js';
import type { DiscoveryResult } from '../../../packages/sdk/src/types.js';

/**
 * The display column where each cell of each row starts (cells are separated by two spaces or
 * more; no cell here holds two spaces in a row).
 */
function columnStarts(table: string): number[][] {
  return table.split('\n').map((line) => {
    const starts = [0];
    for (const m of line.matchAll(/ {2,}(?=\S)/g)) starts.push(stringWidth(line.slice(0, m.index + m[0].length)));
    return starts;
  });
}

const result = (id: string, name: string, provider: string, price: string): DiscoveryResult => ({
  capability: {
    id, name, description: 'd', protocol: 'rest', priceMinor: price, currency: 'USD', category: 'weather', tags: [], schema: null,
    latencyP50Ms: null, status: 'active',
  } as DiscoveryResult['capability'],
  version: { endpoint: 'https://s.example.com', address: { kind: 'url', url: 'https://s.example.com' }, version: '1' },
  provider: { id: 'prv_1', name: provider, verified: true, reputation: 1 },
  score: 0.5,
  scoreBreakdown: { relevance: 1, price: 1, latency: 1, reputation: 1, verification: 1 },
});

// what a terminal gives these: CJK and emoji 2 columns each, a combining mark and a zero-width joiner none
const wide = '天気予報 ☀️ forecast';
const combining = 'Cafe\u0301 cre\u0300me brûle\u0301e';
const zwj = '👩‍💻 coder 🇯🇵';

describe('tables measure display width', () => {
  it('the test strings are as wide as a terminal shows them', () => {
    expect(stringWidth(wide)).toBe(4 * 2 + 1 + 2 + 1 + 8);
    expect(wide.length).toBe(16); // UTF-16 units, what padEnd counted: 4 columns short
    expect(stringWidth(combining)).toBe(combining.normalize('NFC').length);
    expect(stringWidth(zwj)).toBe(2 + 1 + 5 + 1 + 2);
  });

  it('a capability named 天気予報 ☀️ forecast does not push the columns of its row', () => {
    const table = searchTable([
      result('cap_1', wide, 'Météo 株式会社', '10'),
      result('cap_2', 'PDF', 'Acme', '2500'),
      result('cap_3', combining, zwj, '5'),
      result('cap_44', zwj, 'Plain provider', '100'),
    ]);
    const starts = columnStarts(table);
    expect(starts[0]).toHaveLength(6); // ID NAME PRICE PROTOCOL PROVIDER SCORE
    for (const [i, row] of starts.entries()) expect(row, `row ${i}:\n${table}`).toEqual(starts[0]);
    // NAME is as wide as its widest cell (20 columns), then the two-space gap
    expect(starts[0]![2]! - starts[0]![1]!).toBe(20 + 2);
    // and the row itself: the price starts right after the padded name
    const line = table.split('\n')[1]!;
    expect(line.startsWith(`cap_1   ${wide}  0.10 USD`)).toBe(true);
  });

  it('pads every column but the last, by display width', () => {
    const table = renderTable([{ a: '漢字', b: 'x', c: '☀️' }, { a: 'ab', b: 'éé', c: 'end' }], [
      { header: 'A', get: (r) => r.a },
      { header: 'B', get: (r) => r.b },
      { header: 'C', get: (r) => r.c },
    ]);
    expect(table.split('\n')).toEqual(['A     B   C', '漢字  x   ☀️', 'ab    éé  end']);
    expect(padDisplay('漢', 4)).toBe('漢  ');
    expect(padDisplay('toolong', 3)).toBe('toolong');
  });

  it('label: value lines align their values by display width too', () => {
    const text = renderFields([['名前', 'x'], ['price', 'y']]);
    expect(text.split('\n')).toEqual(['名前:   x', 'price:  y']);
  });

  it('shows control characters in a cell escaped: one line per row, no escape sequence reaches the terminal', () => {
    const table = searchTable([result('cap_1', 'evil\nrow\t\u001b[31mred', 'p', '1'), result('cap_2', 'ok', 'p', '1')]);
    expect(table.split('\n')).toHaveLength(3);
    expect(table).not.toContain('\u001b');
    expect(table).toContain('evil\\nrow\\t\\x1b[31mred');
    const starts = columnStarts(table);
    for (const row of starts) expect(row).toEqual(starts[0]);
    // a label: value view keeps a value's line breaks, escapes the rest
    expect(renderFields([['note', 'a\nb\u001b[0m']])).toBe('note:  a\nb\\x1b[0m');
  });
});
