/**
 * `--help` at 80 columns, for every command and topic of the built binary: no line runs past
 * the width, a description's paragraphs are filled (no line breaks early where the next word
 * would have fitted, as oclif did with descriptions broken at 110 columns in the source), and an
 * example broken over lines with ` \` is still exactly the command of the source.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { breakCommand, reflow, shellWords, usageWords } from '../../../src/cli/help.js';
import { cli, removeTempDirs, tempDir } from '../helpers.js';

const WIDTH = 80;
const manifest = JSON.parse(readFileSync(fileURLToPath(new URL('../../../oclif.manifest.json', import.meta.url)), 'utf8')) as {
  commands: Record<string, { examples?: unknown[] }>;
};
const ids = Object.keys(manifest.commands).sort();
/** topics: every prefix of a command id (payouts, payouts:destination), and the root */
const topics = [...new Set(ids.flatMap((id) => id.split(':').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join(':'))))].sort();

afterAll(removeTempDirs);
const configDir = tempDir();
// oclif takes the width from OCLIF_COLUMNS, else the terminal (80 when stdout is piped, as here)
const env = { COLUMNS: String(WIDTH), OCLIF_COLUMNS: String(WIDTH) };

/**
 * Help text per command or topic id ('' for the root). Rendered in one process by oclif's `run`
 * (./help-pages.mjs), not one `agentpay … --help` process each (~100 Node start-ups, 29 s of a
 * suite run); the first test checks that pages from bin/run.js are the same text.
 */
const pages = new Map<string, string>();
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const processEnv = () => {
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) clean[k] = v;
  return { ...clean, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: configDir, ...env };
};
beforeAll(async () => {
  const all = [...new Set(['', ...topics, ...ids])];
  const r = await execa(process.execPath, [fileURLToPath(new URL('./help-pages.mjs', import.meta.url)), ROOT, ...all], { env: processEnv(), extendEnv: false, cwd: configDir, reject: false, stdin: 'ignore', timeout: 120_000 });
  if (r.exitCode !== 0) throw new Error(`help-pages.mjs exited ${r.exitCode}:\n${r.stderr}`);
  for (const [id, page] of Object.entries(JSON.parse(String(r.stdout)) as Record<string, { exitCode: number; stdout: string }>)) {
    if (page.exitCode !== 0) throw new Error(`agentpay ${id.replace(/:/g, ' ')} --help exited ${page.exitCode}:\n${page.stdout}`);
    pages.set(id, page.stdout.replace(/\n$/, '')); // as execa gives stdout, without its last newline
  }
}, 300_000);

/** the lines of a help section (its body, indentation kept), by its header */
function section(page: string, header: string): string[] {
  const lines = page.split('\n');
  const start = lines.indexOf(header);
  if (start === -1) return [];
  const end = lines.findIndex((l, i) => i > start && /^[A-Z][A-Z ]+$/.test(l));
  return lines.slice(start + 1, end === -1 ? undefined : end);
}

/** lines that end early: the next line of the same paragraph starts with a word that would have fitted */
function raggedBreaks(lines: readonly string[], width: number): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    const [line, next] = [lines[i]!, lines[i + 1]!];
    if (!line.trim() || !next.trim() || /^\s*(?:[-*]|\d+\.)\s/.test(next)) continue;
    const word = next.trim().split(' ')[0]!;
    if ([...line].length + 1 + [...word].length <= width) out.push(`${line} ⏎ ${next.trim()}`);
  }
  return out;
}

const tooWide = (page: string) => page.split('\n').filter((l) => [...l].length > WIDTH);

describe('agentpay COMMAND --help at 80 columns', () => {
  it('runs for every command of the manifest and every topic', () => {
    expect(ids.length).toBeGreaterThan(60);
    expect(pages.size).toBe(new Set(['', ...topics, ...ids]).size);
    expect(topics).toEqual(expect.arrayContaining(['wallets', 'payouts', 'payouts:destination']));
  });

  it('is the text the binary prints: the root, a topic and commands through bin/run.js', async () => {
    const sample = ['', 'payouts:destination', 'buy', 'publish'];
    const runs = await Promise.all(sample.map((id) => cli([...(id ? id.split(':') : []), '--help'], { configDir, env })));
    runs.forEach((r, i) => {
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout, `agentpay ${sample[i]} --help`).toBe(pages.get(sample[i]!));
    });
  });

  it('has no line wider than 80 columns, for any command, topic or the root', () => {
    const wide = [...pages].flatMap(([id, page]) => tooWide(page).map((l) => `agentpay ${id.replace(/:/g, ' ')}: ${l}`));
    expect(wide).toEqual([]);
  });

  it("fills each command's description paragraphs and its summary line: no line breaks before the width", () => {
    const ragged = ids.flatMap((id) => {
      const page = pages.get(id)!;
      const summary = page.split('\n\n')[0]!.split('\n');
      return [...raggedBreaks(summary, WIDTH), ...raggedBreaks(section(page, 'DESCRIPTION'), WIDTH)].map((l) => `agentpay ${id.replace(/:/g, ' ')}: ${l}`);
    });
    expect(ragged).toEqual([]);
  });

  it('shows every example as the exact command of the source, a long one continued with " \\" between words', () => {
    for (const id of ids) {
      const examples = (manifest.commands[id]!.examples ?? []).filter((e): e is string => typeof e === 'string' && !e.includes('\n'));
      const shown = section(pages.get(id)!, 'EXAMPLES')
        .join('\n')
        .split('\n\n')
        .map((block) => block.trim().replace(/ \\\n\s+/g, ' '))
        .filter(Boolean);
      const expected = examples.map((e) => e.replace(/<%= config\.bin %>/g, 'agentpay')).map((e) => (e.startsWith('agentpay') ? `$ ${e}` : e));
      expect(shown, id).toEqual(expected);
    }
    // the longest one breaks between words and never inside its quoted values
    const publish = section(pages.get('publish')!, 'EXAMPLES').join('\n');
    expect(publish).toContain('--description "Summarizes a document"');
    expect(publish).toMatch(/ \\\n {6}--/);
  });

  it('keeps a usage line whole within its bracketed groups', () => {
    const usage = section(pages.get('buy')!, 'USAGE');
    expect(usage.some((l) => l.trim() === '[--data <value> | --data-file <value>] [--header <value>...]' || l.includes('[--data <value> | --data-file <value>]'))).toBe(true);
    expect(usage.every((l) => (l.match(/\[/g) ?? []).length === (l.match(/\]/g) ?? []).length)).toBe(true);
  });
});

describe('help text helpers', () => {
  it('reflow joins the lines of a paragraph and keeps paragraphs and list items apart', () => {
    expect(reflow('one\ntwo\n\nthree\n- item\n- item two\n  indented')).toBe('one two\n\nthree\n- item\n- item two\n  indented');
  });

  it('shellWords keeps quoted strings whole; breakCommand continues lines with " \\" and never exceeds the width', () => {
    expect(shellWords(`a --data '{"text":"x y"}' --name "A B" c\\ d`)).toEqual(['a', `--data`, `'{"text":"x y"}'`, '--name', '"A B"', 'c\\ d']);
    const lines = breakCommand(`$ agentpay buy cap_1 --wallet wal_1 --key-file agent.pem --data '{"text":"Long document here"}'`, 40);
    expect(lines).toEqual(['$ agentpay buy cap_1 --wallet wal_1 \\', '    --key-file agent.pem \\', `    --data '{"text":"Long document here"}'`]);
    expect(breakCommand('$ agentpay whoami', 40)).toEqual(['$ agentpay whoami']);
  });

  it('usageWords treats a bracketed group as one word', () => {
    expect(usageWords('$ agentpay buy TARGET [--data <value> | --data-file <value>] [--json]')).toEqual(['$', 'agentpay', 'buy', 'TARGET', '[--data <value> | --data-file <value>]', '[--json]']);
  });
});
