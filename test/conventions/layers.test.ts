/**
 * The layers of docs/architecture.md, enforced: every import of every source file is read (static
 * `import`/`export … from`, dynamic `import()`), and one that crosses a layer the wrong way fails here
 * with the file and the import.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const rel = join(dir, name);
    if (statSync(join(ROOT, rel)).isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;(])import\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm;

/** Every module specifier a file imports, as written. */
export function importsOf(text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  return [...code.matchAll(IMPORT)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

interface Import { file: string; spec: string; target: string | null }

/** Imports of the files under `dir`, with relative specifiers resolved to repository paths. */
function importsUnder(dir: string): Import[] {
  return sourceFiles(dir).flatMap((file) =>
    importsOf(readFileSync(join(ROOT, file), 'utf8')).map((spec) => ({
      file,
      spec,
      target: spec.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), spec)) : null,
    })),
  );
}

/** The graph of relative imports between the source files under `dir` (`x.js` read as the `x.ts` beside it). */
function importGraph(dir: string): Map<string, string[]> {
  const files = new Set(sourceFiles(dir));
  const graph = new Map<string, string[]>([...files].map((f) => [f, []]));
  for (const i of importsUnder(dir)) {
    if (i.target === null) continue;
    const file = [i.target.replace(/\.js$/, '.ts'), i.target.replace(/\.js$/, '.tsx'), `${i.target}/index.ts`].find((f) => files.has(f));
    if (file) graph.get(i.file)!.push(file);
  }
  return graph;
}

/** The import cycles of a graph: each strongly connected set of more than one file, sorted (Tarjan). */
export function cyclesOf(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const set: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      set.push(w);
    } while (w !== v);
    if (set.length > 1) out.push(set.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

const show = (list: Import[]) => list.map((i) => `${i.file}: ${i.spec}`);
const isPackage = (spec: string, names: readonly string[]) => names.some((n) => spec === n || spec.startsWith(`${n}/`));

describe('the layers of docs/architecture.md', () => {
  it('reads imports the way the rule needs (static, re-export, dynamic, side effect; comments ignored)', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export * from './c.js';",
      "export { d } from 'pkg/d';",
      "const e = await import('./e.js');",
      "import './f.js';",
      "// import { g } from './g.js';",
      "/* import { h } from './h.js'; */",
      'import {\n  i,\n  j,\n} from "./ij.js";',
    ].join('\n');
    expect(importsOf(text)).toEqual(['./a.js', '../b.js', './c.js', 'pkg/d', './ij.js', './e.js', './f.js'].sort((x, y) => text.indexOf(x) - text.indexOf(y)));
  });

  it('the SDK imports nothing of the gateway or the CLI', () => {
    const bad = importsUnder('packages/sdk/src').filter((i) => i.target !== null && !i.target.startsWith('packages/sdk/src'));
    expect(show(bad)).toEqual([]);
    const byName = importsUnder('packages/sdk/src').filter((i) => isPackage(i.spec, ['agentpay-cli', 'agentpay-sdk']));
    expect(show(byName)).toEqual([]);
  });

  it('the contract imports nothing else of ours, and only TypeBox from outside', () => {
    const bad = importsUnder('packages/sdk/src/contract').filter((i) => (i.target !== null ? !i.target.startsWith('packages/sdk/src/contract') : i.spec !== '@sinclair/typebox'));
    expect(show(bad)).toEqual([]);
  });

  it('the parts of the SDK that run outside Node import no node: module', () => {
    const portable = ['packages/sdk/src/contract', 'packages/sdk/src/client', 'packages/sdk/src/buyer', 'packages/sdk/src/interop'];
    const files = ['packages/sdk/src/protocol.ts', 'packages/sdk/src/signing.ts', 'packages/sdk/src/errors.ts', 'packages/sdk/src/types.ts', 'packages/sdk/src/webhooks.ts', 'packages/sdk/src/index.ts'];
    const all = importsUnder('packages/sdk/src').filter((i) => portable.some((d) => i.file.startsWith(`${d}/`)) || files.includes(i.file));
    expect(show(all.filter((i) => i.spec.startsWith('node:')))).toEqual([]);
  });

  it('the gateway and CLI import the SDK by its package name, never by a path into packages/', () => {
    const bad = ['src', 'commands'].flatMap(importsUnder).filter((i) => i.target !== null && i.target.startsWith('packages/'));
    expect(show(bad)).toEqual([]);
  });

  it('the domain imports no web framework, terminal library or database driver', () => {
    const banned = ['fastify', '@fastify', 'fastify-plugin', '@oclif/core', 'ink', 'react', '@inquirer/prompts', 'better-sqlite3', 'pg', 'ioredis', 'drizzle-orm', 'undici'];
    const bad = importsUnder('src/domain').filter((i) => isPackage(i.spec, banned) || (i.target !== null && /^src\/(gateway|cli|store\/(sqlite|pg))\//.test(i.target)));
    expect(show(bad)).toEqual([]);
  });

  it('the domain imports no rail adapter of src/rails: the adapters (sandbox and real) are injected through the interfaces of src/domain/rails/adapters.ts', () => {
    const bad = importsUnder('src/domain').filter((i) => i.target !== null && i.target.startsWith('src/rails/'));
    expect(show(bad)).toEqual([]);
  });

  it('the store imports nothing of the domain, the gateway or the CLI', () => {
    const bad = importsUnder('src/store').filter((i) => i.target !== null && /^src\/(domain|gateway|cli|rails)\//.test(i.target));
    expect(show(bad)).toEqual([]);
  });

  it('the gateway imports nothing of the CLI', () => {
    const bad = importsUnder('src/gateway').filter((i) => i.target !== null && i.target.startsWith('src/cli/'));
    expect(show(bad)).toEqual([]);
  });

  it('finds an import cycle, and there is none in src/ or in the SDK (type imports count: a cycle of types is a knot in the design too)', () => {
    expect(cyclesOf(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
    expect(cyclesOf(new Map([['a', ['b']], ['b', []]]))).toEqual([]);
    for (const dir of ['src', 'packages/sdk/src']) expect(cyclesOf(importGraph(dir)), dir).toEqual([]);
  });

  it('the domain is grouped by family: no source file sits loose at src/domain, and the folders are those of docs/architecture.md', () => {
    const entries = readdirSync(join(ROOT, 'src/domain'));
    expect(entries.filter((n) => !statSync(join(ROOT, 'src/domain', n)).isDirectory())).toEqual([]);
    expect(entries.sort()).toEqual(['market', 'payments', 'platform', 'policies', 'rails', 'tenancy', 'wallets']);
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(entries.filter((n) => !new RegExp(`^  ${n}/ `, 'm').test(doc))).toEqual([]);
  });

  it('core imports none of the other layers', () => {
    const bad = importsUnder('src/core').filter((i) => i.target !== null && !i.target.startsWith('src/core'));
    expect(show(bad)).toEqual([]);
  });

  it('production code imports no test code, and no src/dev folder exists to import', () => {
    const bad = ['src', 'commands', 'packages/sdk/src'].flatMap(importsUnder).filter((i) => i.target !== null && (i.target.startsWith('test/') || i.target.startsWith('bench/')));
    expect(show(bad)).toEqual([]);
    expect(() => statSync(join(ROOT, 'src/dev'))).toThrow();
  });
});
