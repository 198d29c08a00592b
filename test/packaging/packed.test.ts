/**
 * What users get from the registry: both packages packed by `npm pack` (agentpay-sdk from
 * packages/sdk, agentpay-cli from the root) and installed from those tarballs alone, in temp
 * directories outside this checkout, so nothing resolves into it:
 * - the tarballs: LICENSE, no source maps or .tsbuildinfo; every export condition of the SDK's packed
 *   package.json names a file that is in its tarball (its `prepack` strips `agentpay-source`, which
 *   names src/; `postpack` restores the file);
 * - the SDK installed on its own: no install script anywhere in its tree, no native module, exactly
 *   its two dependencies (docs/sdk.md records the size printed here), every peer-free entry point imports;
 * - a seller and a buyer written as the README shows (fastify + agentpay-sdk/seller/fastify,
 *   createBuyer from agentpay-sdk/buyer) make one paid call through `agentpay dev` run from the
 *   installed agentpay-cli;
 * - `agentpay init` run from the installed CLI writes registry ranges (^version), and a project it
 *   makes (its dependencies pointed at the tarballs with --sdk-dependency/--cli-dependency, since
 *   the versions are not on the registry yet) passes its own `npm test` and `npm run e2e`.
 *
 * One install of the CLI serves all but the SDK-alone case (each costs 25 to 40 s here): the user's
 * directory is a project `agentpay init` made, its dependencies the tarballs, installed once; the
 * README's seller and buyer run in a directory under it. That project is written by this checkout's
 * CLI (the installed one is not there before the install), and the installed CLI's `init` with the
 * same arguments must write exactly the same files: so the project whose `npm test` and e2e pass is
 * the one the installed CLI makes.
 *
 * dist/ and packages/sdk/dist/ must be built (test/global-setup.ts builds both; CI runs
 * `npm run build` first): the CLI is packed with --ignore-scripts, so the root's `prepare` does not
 * rebuild from inside the test. The SDK is packed with its scripts (prepack, postpack), from a copy
 * of its published files, so the checkout's package.json is never rewritten under other tests.
 *
 * better-sqlite3 (a dependency of the CLI, the gateway's store) compiles from source when no
 * prebuilt binary can be downloaded, as here: 4 min per install measured on this 2-core machine.
 * The CLI installs therefore run with --ignore-scripts and then get the binding this checkout
 * compiled (node_modules/better-sqlite3/build/Release/better_sqlite3.node, same version and Node),
 * copied into the installed better-sqlite3; with another version it is compiled (`npm rebuild`).
 * Only that one binary file comes from the checkout; every package is installed from the tarballs
 * and the registry. The SDK's own install runs its scripts (it has none, which is checked).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bytesUnder, expectFromTarball, freePort, NPM_FLAGS, packing, readJson, ROOT, stop, walk } from './pack.js';

const { BASE, packed, run, newProject, provideSqliteBinding, startNode } = packing('agentpay-packed-');

describe('the tarballs', () => {
  it('hold LICENSE, no source maps and no .tsbuildinfo', () => {
    for (const p of Object.values(packed)) {
      const files = p.files.map((f) => f.path);
      expect(files, p.name).toContain('LICENSE');
      expect(files, p.name).toContain('README.md');
      expect(files.filter((f) => /\.map$|tsbuildinfo/.test(f)), p.name).toEqual([]);
      expect(files.filter((f) => /^(test|src|\.tmp)\//.test(f)), `${p.name} ships sources or tests`).toEqual([]);
      expect(readJson(join(ROOT, p.name === 'agentpay-sdk' ? 'packages/sdk' : '', 'package.json')).license).toBe('MIT');
    }
    const cli = packed['agentpay-cli']!.files.map((f) => f.path);
    for (const f of ['bin/run.js', 'dist/src/index.js', 'dist/commands/dev.js', 'templates/rest/package.json', 'templates/mcp/package.json', 'drizzle/meta/_journal.json']) expect(cli).toContain(f);
  });

  it("every export condition of the SDK's packed package.json names a file that is in its tarball", async () => {
    const sdk = packed['agentpay-sdk']!;
    const files = new Set(sdk.files.map((f) => f.path));
    const unpacked = join(BASE, 'sdk-unpacked');
    mkdirSync(unpacked);
    const tar = await run('tar', ['-xzf', sdk.tarball, '-C', unpacked, 'package/package.json'], BASE, 30_000);
    expect(tar.exitCode, tar.output).toBe(0);
    const { exports } = readJson(join(unpacked, 'package/package.json')) as { exports: Record<string, string | Record<string, string>> };
    const missing: string[] = [];
    let checked = 0;
    for (const [subpath, target] of Object.entries(exports)) {
      const conditions = typeof target === 'string' ? { default: target } : target;
      for (const [condition, file] of Object.entries(conditions)) {
        checked++;
        if (!files.has(file.replace(/^\.\//, ''))) missing.push(`${subpath} (${condition}): ${file}`);
      }
    }
    expect(missing).toEqual([]);
    expect(checked).toBeGreaterThan(20);
    // the checkout's own package.json keeps the condition its tsc and vitest resolve sources by
    expect(JSON.stringify(readJson(join(ROOT, 'packages/sdk/package.json')).exports)).toContain('"agentpay-source"');
  });
});

describe('agentpay-sdk installed on its own', () => {
  it('runs no install script, has no native module, depends on two packages, and imports', { timeout: 180_000 }, async () => {
    const dir = newProject('sdk-alone');
    const install = await run('npm', ['install', packed['agentpay-sdk']!.tarball, ...NPM_FLAGS], dir, 150_000);
    expect(install.exitCode, install.output).toBe(0);
    expectFromTarball(dir, 'agentpay-sdk');

    const lock = readJson(join(dir, 'package-lock.json')) as { packages: Record<string, { hasInstallScript?: boolean; optional?: boolean }> };
    const installed = Object.keys(lock.packages).filter((k) => k !== '');
    expect(installed.filter((k) => lock.packages[k]!.hasInstallScript)).toEqual([]);
    // exactly its declared dependencies: a new one must be a decision (and docs/sdk.md updated)
    expect(installed.sort()).toEqual(['node_modules/@noble/ed25519', 'node_modules/@sinclair/typebox', 'node_modules/agentpay-sdk']);
    const native = walk(join(dir, 'node_modules')).filter((f) => f.endsWith('.node') || f.endsWith('binding.gyp'));
    expect(native).toEqual([]);

    const bytes = bytesUnder(join(dir, 'node_modules'));
    const sdkBytes = bytesUnder(join(dir, 'node_modules/agentpay-sdk'));
    console.log(`[packed] agentpay-sdk installs ${installed.length - 1} dependencies; node_modules ${(bytes / 1e6).toFixed(1)} MB (agentpay-sdk itself ${(sdkBytes / 1e3).toFixed(0)} kB)`);
    expect(bytes, 'docs/sdk.md records the install size: update it with this change').toBeLessThan(10e6);

    // every entry point without a peer dependency loads in plain Node
    const peerFree = ['agentpay-sdk', 'agentpay-sdk/client', 'agentpay-sdk/buyer', 'agentpay-sdk/seller/core', 'agentpay-sdk/seller/node', 'agentpay-sdk/protocol', 'agentpay-sdk/signing', 'agentpay-sdk/contract', 'agentpay-sdk/errors', 'agentpay-sdk/types', 'agentpay-sdk/webhooks'];
    const script = `for (const s of ${JSON.stringify(peerFree)}) { const m = await import(s); if (Object.keys(m).length === 0 && s !== 'agentpay-sdk/types') throw new Error(s + ' exports nothing'); } console.log('ok');`;
    const imported = await run(process.execPath, ['--input-type=module', '-e', script], dir, 30_000);
    expect(imported.output).toContain('ok');
    expect(imported.exitCode, imported.output).toBe(0);

    // without undici (the CLI's, not the SDK's), the client uses Node's fetch: a call reaches the
    // network (refused here: nothing listens on port 9), and a per-client CA is refused by name
    const call = `import { AgentpayClient } from 'agentpay-sdk/client';
      const seen = {};
      try { await new AgentpayClient({ baseUrl: 'http://127.0.0.1:9' }).platform.health(); } catch (e) { seen.plain = e.code + ' ' + (e.cause?.code ?? e.cause?.cause?.code ?? ''); }
      try { await new AgentpayClient({ baseUrl: 'https://127.0.0.1:9', ca: 'PEM' }).platform.health(); } catch (e) { seen.ca = e.code + ' ' + e.details?.field; }
      console.log(JSON.stringify(seen));`;
    const called = await run(process.execPath, ['--input-type=module', '-e', call], dir, 30_000);
    expect(called.exitCode, called.output).toBe(0);
    const seen = JSON.parse(called.output.trim().split('\n').at(-1)!) as { plain: string; ca: string };
    expect(seen.plain).not.toMatch(/MODULE_NOT_FOUND/);
    expect(seen.ca).toBe('VALIDATION_FAILED ca');
  });
});

describe('agentpay-sdk and agentpay-cli installed from their tarballs', () => {
  const dir = join(BASE, 'user');
  const bin = () => join(dir, 'node_modules/agentpay-cli/bin/run.js');
  /** `agentpay init user`, its dependencies the tarballs (the versions are not on the registry yet) */
  const initArgs = () => ['init', 'user', '--template', 'rest', '--yes', '--json', '--sdk-dependency', `file:${packed['agentpay-sdk']!.tarball}`, '--cli-dependency', `file:${packed['agentpay-cli']!.tarball}`];

  beforeAll(async () => {
    // what a seller of the README installs (the SDK, fastify with fastify-plugin, the CLI) is what the
    // REST template depends on: one install serves the README's seller and buyer and the project's tests
    const made = await run(process.execPath, [join(ROOT, 'bin/run.js'), ...initArgs()], BASE, 60_000);
    expect(made.exitCode, made.output).toBe(0);
    const deps = readJson(join(dir, 'package.json')) as { dependencies: Record<string, string> };
    expect(Object.keys(deps.dependencies).sort()).toEqual(['agentpay-sdk', 'fastify', 'fastify-plugin']);
    const install = await run('npm', ['install', ...NPM_FLAGS, '--ignore-scripts'], dir, 300_000);
    expect(install.exitCode, install.output).toBe(0);
    await provideSqliteBinding(dir);
  }, 600_000);

  it('come from the tarballs: one agentpay-sdk, shared by the CLI; the agentpay binary is linked', () => {
    expectFromTarball(dir, 'agentpay-sdk');
    expectFromTarball(dir, 'agentpay-cli');
    expect(existsSync(join(dir, 'node_modules/agentpay-cli/node_modules/agentpay-sdk'))).toBe(false);
    expect(realpathSync(join(dir, 'node_modules/.bin/agentpay'))).toBe(realpathSync(bin()));
    // the template pins fastify-plugin ^5, and the SDK's peer range takes it (6: docs.test.ts, where npm
    // picks the newest); the README's seller below runs on it
    expect(readJson(join(dir, 'node_modules/fastify-plugin/package.json')).version).toMatch(/^5\./);
  });

  it('a seller and a buyer written as the README shows make one paid call through agentpay dev', { timeout: 240_000 }, async () => {
    // in a directory of their own under the installed project: packages resolve from its node_modules
    const readme = join(dir, 'readme');
    mkdirSync(readme);
    const dataDir = join(readme, '.agentpay');
    const dev = startNode([join(dir, 'node_modules/.bin/agentpay'), 'dev', '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--json', '--quiet'], readme);
    const ready = JSON.parse(await dev.firstLine);
    expect(ready).toMatchObject({ baseUrl: expect.any(String), caCertPath: expect.any(String), provider: { apiKey: expect.any(String) }, workspace: { apiKey: expect.any(String) } });

    // seller.mjs: the README's seller, its values from the environment
    writeFileSync(join(readme, 'seller.mjs'), `
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { agentpaySeller } from 'agentpay-sdk/seller/fastify';

const gatewayUrl = process.env.GATEWAY_URL, providerKey = process.env.PROVIDER_KEY, ca = readFileSync(process.env.CA, 'utf8');
const app = Fastify();
await app.register(agentpaySeller, { gatewayUrl, apiKey: providerKey, ca, capabilityId: process.env.CAPABILITY_ID });
app.post('/summarize', async (req) => ({ summary: 'agents pay' }));   // runs only after payment is authorized
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
`);
    // setup.mjs: what the README does with the CLI (publish, a funded wallet with a key pair), with the SDK's client
    writeFileSync(join(readme, 'setup.mjs'), `
import { readFileSync, writeFileSync } from 'node:fs';
import { AgentpayClient } from 'agentpay-sdk/client';
import { generateKeyPair } from 'agentpay-sdk/signing';

const ca = readFileSync(process.env.CA, 'utf8');
const provider = new AgentpayClient({ baseUrl: process.env.GATEWAY_URL, apiKey: process.env.PROVIDER_KEY, ca });
const workspace = new AgentpayClient({ baseUrl: process.env.GATEWAY_URL, apiKey: process.env.WORKSPACE_KEY, ca });
const { capability } = await provider.capabilities.publish({ name: 'packed-summarizer', description: 'Summarizes text', category: 'text', priceMinor: '100', protocol: 'rest', endpoint: process.env.ENDPOINT });
const keys = await generateKeyPair();
const wallet = await workspace.wallets.create({ ownerType: 'agent', ownerId: 'researcher', publicKeyPem: keys.publicKeyPem });
await workspace.wallets.fund(wallet.id, '1000');
writeFileSync('agent.pem', keys.privateKeyPem, { mode: 0o600 });
console.log(JSON.stringify({ capabilityId: capability.id, walletId: wallet.id }));
`);
    // buyer.mjs: the README's buyer
    writeFileSync(join(readme, 'buyer.mjs'), `
import { readFileSync } from 'node:fs';
import { createBuyer } from 'agentpay-sdk/buyer';

const gatewayUrl = process.env.GATEWAY_URL, ca = readFileSync(process.env.CA, 'utf8'), privateKeyPem = readFileSync('agent.pem', 'utf8');
const buyer = createBuyer({ gatewayUrl, ca, walletId: process.env.WALLET_ID, privateKeyPem, maxPriceMinor: '500' });
const res = await buyer.fetch(process.env.ENDPOINT, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
console.log(JSON.stringify({ status: res.status, body: await res.json(), receipt: res.receipt }));
`);
    const gatewayEnv = { GATEWAY_URL: ready.baseUrl, CA: ready.caCertPath, PROVIDER_KEY: ready.provider.apiKey, WORKSPACE_KEY: ready.workspace.apiKey };

    // the capability names the seller's URL, the seller its capability: a port chosen first
    const url = `http://127.0.0.1:${await freePort()}`;
    const endpoint = `${url}/summarize`;
    const setup = await run(process.execPath, ['setup.mjs'], readme, 60_000, { ...gatewayEnv, ENDPOINT: endpoint });
    expect(setup.exitCode, setup.output).toBe(0);
    const { capabilityId, walletId } = JSON.parse(setup.stdout);
    const seller = startNode(['seller.mjs'], readme, { ...gatewayEnv, CAPABILITY_ID: capabilityId, PORT: new URL(url).port });
    expect(await seller.firstLine).toBe('listening');

    const unpaid = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unpaid.status).toBe(402);

    const bought = await run(process.execPath, ['buyer.mjs'], readme, 60_000, { ...gatewayEnv, WALLET_ID: walletId, ENDPOINT: endpoint });
    expect(bought.exitCode, bought.output).toBe(0);
    const { status, body, receipt } = JSON.parse(bought.stdout);
    expect(status).toBe(200);
    expect(body).toEqual({ summary: 'agents pay' });
    expect(receipt).toMatchObject({ status: 'success', consumerId: walletId, capabilityId, amount: { amountMinor: '100' } });

    // the installed CLI verifies the receipt offline
    const verified = await run(process.execPath, [bin(), 'receipts', 'verify', receipt.id, '--data-dir', dataDir, '--json'], readme, 60_000);
    expect(verified.exitCode, verified.output).toBe(0);

    await stop(seller.child);
    await stop(dev.child);
  });

  it('agentpay init from the installed CLI writes registry ranges; a project on the tarballs passes its npm test and npm run e2e', { timeout: 600_000 }, async () => {
    const ranged = await run(process.execPath, [bin(), 'init', 'ranged', '--template', 'rest', '--yes', '--json'], BASE, 60_000);
    expect(ranged.exitCode, ranged.output).toBe(0);
    const rangedPkg = readJson(join(BASE, 'ranged/package.json'));
    expect(rangedPkg.dependencies['agentpay-sdk']).toBe(`^${packed['agentpay-sdk']!.version}`);
    expect(rangedPkg.devDependencies['agentpay-cli']).toBe(`^${packed['agentpay-cli']!.version}`);
    expect(rangedPkg.dependencies.agentpay).toBeUndefined();

    // the installed CLI makes, with the tarballs as dependencies, exactly the project installed here
    const again = join(BASE, 'again');
    mkdirSync(again);
    const made = await run(process.execPath, [bin(), ...initArgs()], again, 60_000);
    expect(made.exitCode, made.output).toBe(0);
    /** the files init wrote: all but what the install and the README's run added */
    const written = (root: string) =>
      readdirSync(root, { withFileTypes: true })
        .filter((e) => !['node_modules', 'readme', 'package-lock.json'].includes(e.name))
        .flatMap((e) => (e.isDirectory() ? walk(root, e.name) : [e.name]))
        .sort();
    expect(written(join(again, 'user'))).toEqual(written(dir));
    expect(written(dir)).toContain('scripts/e2e.mjs');
    for (const f of written(dir)) expect(readFileSync(join(again, 'user', f), 'utf8'), f).toBe(readFileSync(join(dir, f), 'utf8'));

    const test = await run('npm', ['test'], dir, 120_000);
    expect(test.exitCode, test.output).toBe(0);
    const e2e = await run('npm', ['run', 'e2e'], dir, 180_000);
    expect(e2e.exitCode, e2e.output).toBe(0);
    expect(e2e.output).toContain('e2e: ok');
  });
});
