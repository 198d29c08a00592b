/**
 * Every file or folder the documentation names exists: README.md and docs/**.md are read for paths
 * under the repository's top folders (`src/…`, `test/…`, `packages/…`, `docs/…`, …), and each must
 * be there, so a file moved or renamed without its docs fails here with the doc and the path.
 *
 * A path is read as written in the docs' shorthands: `{a,b}` names each, `*` any file of its folder
 * (at least one), `…` or a trailing `/` a folder, a name without extension the start of a file's
 * name (`drizzle-pg/0006` for a migration). It may be the repository's, the SDK package's
 * (packages/sdk: docs about the SDK name its files from the package) or a template project's
 * (templates/rest, templates/mcp: what `agentpay init` writes).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOP = ['src', 'test', 'packages', 'docs', 'bench', 'commands', 'templates', 'fixtures', 'scripts', 'drizzle', 'drizzle-pg', 'dashboard'];
/** where a path may be rooted: the repository, the SDK package, a template project */
const BASES = ['', 'packages/sdk', 'templates/rest', 'templates/mcp'];
/** paths a command writes when it runs, with what writes them */
const WRITTEN_AT_RUN_TIME: Record<string, string> = { 'bench/results/profiles/': 'npm run bench -- --profile' };

const PATH = new RegExp(`(?<![\\w./@:-])((?:${TOP.join('|')})/[A-Za-z0-9_.\\-/{},*…]*)`, 'g');

/** The paths a text names, as written (trailing punctuation dropped). */
export function pathsIn(text: string): string[] {
  return [...text.matchAll(PATH)].map((m) => m[1]!.replace(/[.,;:]+$/, '')).filter((p) => !p.endsWith('/') || p.length > 0);
}

/** `a/{x,y}/b` as `a/x/b` and `a/y/b`. */
export function expandBraces(path: string): string[] {
  const m = /\{([^{}]*)\}/.exec(path);
  if (!m) return [path];
  return m[1]!.split(',').flatMap((alt) => expandBraces(path.slice(0, m.index) + alt + path.slice(m.index + m[0].length)));
}

const isDir = (p: string) => existsSync(p) && statSync(p).isDirectory();

/** Whether one expanded path names something under `base`. */
function existsUnder(base: string, path: string): boolean {
  const cut = path.indexOf('…');
  if (cut >= 0) return isDir(join(ROOT, base, path.slice(0, cut)));
  if (path.includes('*')) {
    const dir = join(ROOT, base, dirname(path));
    if (!isDir(dir)) return false;
    const name = new RegExp(`^${path.slice(path.lastIndexOf('/') + 1).split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    return readdirSync(dir).some((f) => name.test(f));
  }
  const full = join(ROOT, base, path);
  if (existsSync(full)) return true;
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (path.endsWith('/') || last.includes('.') || !isDir(dirname(full))) return false;
  return readdirSync(dirname(full)).some((f) => f.startsWith(last));
}

export function pathExists(path: string): boolean {
  if (path in WRITTEN_AT_RUN_TIME) return true;
  return expandBraces(path).every((p) => BASES.some((b) => existsUnder(b, p)));
}

function docFiles(): string[] {
  const under = (dir: string): string[] => readdirSync(join(ROOT, dir)).flatMap((n) => {
    const rel = join(dir, n);
    return statSync(join(ROOT, rel)).isDirectory() ? under(rel) : n.endsWith('.md') ? [rel] : [];
  });
  return ['README.md', ...under('docs')];
}

describe('paths named in the docs', () => {
  it('are read as the docs write them', () => {
    expect(pathsIn('see `src/domain/rails/adapters.ts`, and src/rails/{usdc,stripe}/ (or docs/api/…). Not: ./src/x, http://x/src/y, @x402/src/z')).toEqual(['src/domain/rails/adapters.ts', 'src/rails/{usdc,stripe}/', 'docs/api/…']);
    expect(expandBraces('src/{a,b}/{c,d}.ts')).toEqual(['src/a/c.ts', 'src/a/d.ts', 'src/b/c.ts', 'src/b/d.ts']);
    expect(pathExists('src/domain/rails/adapters.ts')).toBe(true);
    expect(pathExists('src/sdk/client/wallets.ts')).toBe(false);
    expect(pathExists('src/domain/{wallets,nowhere}/')).toBe(false);
    expect(pathExists('test/rails/*.test.ts')).toBe(true);
    expect(pathExists('test/rails/*.nothing')).toBe(false);
    expect(pathExists('drizzle-pg/0000')).toBe(true);
    expect(pathExists('src/client/http.ts')).toBe(true); // the SDK package's
  });

  it('exist: every src/…, test/…, packages/…, docs/… path that README.md or a doc in docs/ names', () => {
    const missing = docFiles().flatMap((doc) => pathsIn(readFileSync(join(ROOT, doc), 'utf8')).filter((p) => !pathExists(p)).map((p) => `${doc}: ${p}`));
    expect([...new Set(missing)]).toEqual([]);
  });
});
