/**
 * Docs that run: the programs of README.md and docs/*.md are run from a fresh directory against the
 * packed tarballs (test/packaging/pack.ts) and a real `agentpay dev`, so a snippet that stops working
 * fails here.
 *
 * Every ```ts, ```js and ```sh block says what it is, in the words after the language of its info
 * string (GitHub shows only the language):
 *   run        a program the test runs as pasted, in document order, all of a file in one directory
 *              (see below);
 *   fragment   part of a program (names defined elsewhere: `buyer`, `url`, …), or a module for a
 *              runtime the test does not have (Workers, Bun, Deno, Next.js);
 *   example    commands shown in use, with placeholders (`cap_…`) or needing what the test does not
 *              make (this repository's clone, a production host, a second terminal, a desktop host);
 *   output     what a program prints.
 * A block with none of these fails the test, so each new one is a decision.
 *
 * How `run` blocks run: one directory, a project with agentpay-sdk and agentpay-cli installed from
 * the tarballs and fastify + fastify-plugin from the registry (the README's seller install; npm picks
 * fastify-plugin 6 today, packed.test.ts's template project pins 5: the SDK's peer range takes both),
 * with `agentpay dev` running in it (its .agentpay is the nearest, so `npx agentpay dev env` finds it).
 * Each file starts from a clean environment (userEnv). A `sh` block runs in bash -e; what it exports
 * stays set for the file's later blocks, as in a terminal. A `ts`/`js` block is written to a file
 * (the name its first line's comment gives, e.g. `// seller.ts`, else block-N) with its types erased
 * (TypeScript's transpileModule: what `npx tsx seller.ts` runs) and run by node with that environment;
 * `run serve` blocks are servers: started, and the next block runs once the port given by PORT
 * (which the test sets to a free port) answers. npm in a block runs with scripts off
 * (npm_config_ignore_scripts: better-sqlite3 would otherwise compile for minutes; pack.ts).
 *
 * Numbers a doc states that this install measures are checked here: docs/sdk.md's install size.
 * Not here: that every file path a doc names exists (another test).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { bytesUnder, freePort, NPM_FLAGS, packing, readJson, ROOT, stop } from './pack.js';

const { packed, run, newProject, provideSqliteBinding, startNode } = packing('agentpay-docs-');

export const DOCS = ['README.md', ...readdirDocs()];
function readdirDocs(): string[] {
  return (ts.sys.readDirectory(join(ROOT, 'docs'), ['.md'], undefined, undefined, 1) as string[]).map((p) => p.slice(ROOT.length + 1)).sort();
}

const MARKS = ['run', 'serve', 'fragment', 'example', 'output'] as const;
const LANGS = new Set(['ts', 'js', 'sh']);

interface Block {
  file: string;
  line: number;
  lang: string;
  marks: string[];
  code: string;
}

/** The fenced blocks of a markdown file (``` fences, any indent). */
export function blocksOf(file: string, text: string): Block[] {
  const out: Block[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*(.*)$/.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]!); j++) body.push(lines[j]!.slice(indent));
    out.push({ file, line: i + 1, lang: open[2]!, marks: open[3]!.split(/\s+/).filter(Boolean), code: body.join('\n') + '\n' });
    i = j;
  }
  return out;
}

const allBlocks = DOCS.flatMap((f) => blocksOf(f, readFileSync(join(ROOT, f), 'utf8')));
const runnable = (b: Block) => LANGS.has(b.lang) && b.marks.includes('run');

describe('every ts, js and sh block of README.md and docs/*.md', () => {
  it('is run or marked as not a program (fragment, example, output)', () => {
    const unmarked = allBlocks.filter((b) => LANGS.has(b.lang) && !b.marks.some((m) => (MARKS as readonly string[]).includes(m)));
    expect(unmarked.map((b) => `${b.file}:${b.line} \`\`\`${b.lang}`), 'mark each: run, fragment, example or output (test/packaging/docs.test.ts)').toEqual([]);
    const unknown = allBlocks.filter((b) => LANGS.has(b.lang) && b.marks.some((m) => !(MARKS as readonly string[]).includes(m)));
    expect(unknown.map((b) => `${b.file}:${b.line} ${b.marks.join(' ')}`)).toEqual([]);
    expect(allBlocks.filter(runnable).length).toBeGreaterThan(4);
  });
});

describe('the runnable blocks, from a fresh directory on the tarballs and agentpay dev', () => {
  let dir: string;
  let devUrl: string;

  beforeAll(async () => {
    dir = newProject('user');
    const install = await run('npm', ['install', packed['agentpay-sdk']!.tarball, packed['agentpay-cli']!.tarball, 'fastify', 'fastify-plugin', ...NPM_FLAGS, '--ignore-scripts'], dir, 400_000);
    expect(install.exitCode, install.output).toBe(0);
    await provideSqliteBinding(dir);
    const dev = startNode([join(dir, 'node_modules/.bin/agentpay'), 'dev', '--port', '0', '--http-port', '0', '--json', '--quiet'], dir);
    devUrl = JSON.parse(await dev.firstLine).baseUrl;
  }, 600_000);

  it('fastify-plugin 6 is what npm chose beside the SDK (5: packed.test.ts)', () => {
    expect(readJson(join(dir, 'node_modules/fastify-plugin/package.json')).version).toMatch(/^6\./);
    expect(devUrl).toMatch(/^https:\/\/127\.0\.0\.1:/);
  });

  it("docs/sdk.md's install size is the SDK's measured one", async () => {
    const alone = newProject('sdk-alone');
    const install = await run('npm', ['install', packed['agentpay-sdk']!.tarball, ...NPM_FLAGS], alone, 150_000);
    expect(install.exitCode, install.output).toBe(0);
    const mb = (bytesUnder(join(alone, 'node_modules')) / 1e6).toFixed(1);
    const lock = readJson(join(alone, 'package-lock.json')) as { packages: Record<string, unknown> };
    const deps = Object.keys(lock.packages).filter((k) => k !== '' && k !== 'node_modules/agentpay-sdk').length;
    const sdkDoc = readFileSync(join(ROOT, 'docs/sdk.md'), 'utf8');
    console.log(`[docs] agentpay-sdk installed alone: ${deps} dependencies, ${mb} MB`);
    expect(sdkDoc.includes(`adds ${deps + 1} packages, ${mb} MB of files`), `docs/sdk.md should say: adds ${deps + 1} packages, ${mb} MB of files`).toBe(true);
    expect(sdkDoc.includes(`It has ${['no', 'one', 'two', 'three'][deps] ?? deps} dependencies`), `docs/sdk.md should say: It has ${deps} dependencies`).toBe(true);
  }, 200_000);

  for (const file of DOCS) {
    const blocks = allBlocks.filter((b) => b.file === file && runnable(b));
    if (blocks.length === 0) continue;
    it(`${file}: ${blocks.length} block(s) run as pasted`, { timeout: 400_000 }, async () => {
      const work = mkdtempSync(join(dir, 'run-'));
      // the file's shell: a clean environment, the project's bin first (npx finds agentpay there anyway)
      let env: Record<string, string> = { PORT: String(await freePort()), npm_config_ignore_scripts: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_prefer_offline: 'true' };
      const servers: ChildProcess[] = [];
      try {
        for (const [n, b] of blocks.entries()) {
          const where = `${file}:${b.line}`;
          if (b.lang === 'sh') {
            const envFile = join(work, `env-${n}.json`);
            const script = `set -e\n${b.code}\nnode -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify(process.env))' ${JSON.stringify(envFile)}\n`;
            const r = await run('bash', ['-c', script], work, 300_000, env);
            expect(r.exitCode, `${where}\n${r.output}`).toBe(0);
            env = Object.fromEntries(Object.entries(readJson(envFile) as Record<string, string>).filter(([k]) => k.startsWith('AGENTPAY_') || k === 'PORT' || k.startsWith('npm_config_')));
            continue;
          }
          const name = (/^\/\/\s*([\w.-]+\.[tj]s)\b/.exec(b.code)?.[1] ?? `block-${n}.ts`).replace(/\.[tj]s$/, '.mjs');
          const js = ts.transpileModule(b.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: false } }).outputText;
          writeFileSync(join(work, name), js);
          if (b.marks.includes('serve')) {
            const server = startNode([name], work, env);
            servers.push(server.child);
            await listening(Number(env.PORT), server.child, () => `${where}: ${server.stderr()}`);
            continue;
          }
          const r = await run(process.execPath, [name], work, 120_000, env);
          expect(r.exitCode, `${where}\n${r.output}`).toBe(0);
        }
      } finally {
        await Promise.all(servers.map(stop));
      }
    });
  }
});

/** Resolves once something accepts connections on the port; fails when the server exits first. */
async function listening(port: number, child: ChildProcess, why: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before it listened on ${port}: ${why()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => {
        s.end();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after 60 s: ${why()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
