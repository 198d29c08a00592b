/**
 * Compiles TestUSDC.sol (OpenZeppelin's ERC-20, 6 decimals) and the mock aggregator with solc
 * from npm, once: the result is cached in the temp directory keyed by the source's and the
 * compiler's hash (solcjs takes several seconds). Run alone: `npx tsx test/rails/usdc/compile.ts`.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Abi, Hex } from 'viem';

const require = createRequire(import.meta.url);
const here = dirname(fileURLToPath(import.meta.url));
// the source sits next to this file in test/, or beside dist/test/… after tsc: find it in the repo
const SOURCE_PATHS = [join(here, 'TestUSDC.sol'), join(here, '../../../../test/rails/usdc/TestUSDC.sol')];

export interface Compiled { abi: Abi; bytecode: Hex }

export function compileTestContracts(): { TestUSDC: Compiled; MockAggregator: Compiled } {
  const path = SOURCE_PATHS.find((p) => existsSync(p));
  if (!path) throw new Error(`TestUSDC.sol not found (looked in ${SOURCE_PATHS.join(', ')})`);
  const source = readFileSync(path, 'utf8');
  const solcVersion = (require('solc/package.json') as { version: string }).version;
  const ozVersion = (require('@openzeppelin/contracts/package.json') as { version: string }).version;
  const key = createHash('sha256').update(`${source}\n${solcVersion}\n${ozVersion}`).digest('hex').slice(0, 16);
  const cacheDir = join(tmpdir(), 'agentpay-solc-cache');
  const cached = join(cacheDir, `${key}.json`);
  if (existsSync(cached)) return JSON.parse(readFileSync(cached, 'utf8'));

  const solc = require('solc') as { compile(input: string, opts: { import(p: string): { contents: string } | { error: string } }): string };
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDC.sol': { content: source } },
    settings: { optimizer: { enabled: true, runs: 200 }, evmVersion: 'paris', outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
  };
  const findImport = (p: string) => {
    try {
      return { contents: readFileSync(require.resolve(p), 'utf8') };
    } catch {
      return { error: `not found: ${p}` };
    }
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input), { import: findImport })) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(errors.map((e) => e.formattedMessage).join('\n'));
  const pick = (name: string): Compiled => {
    const c = out.contracts['TestUSDC.sol']![name]!;
    return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
  };
  const result = { TestUSDC: pick('TestUSDC'), MockAggregator: pick('MockAggregator') };
  mkdirSync(cacheDir, { recursive: true });
  const tmp = `${cached}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(result));
  renameSync(tmp, cached);
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  const r = compileTestContracts();
  console.log(`compiled in ${Date.now() - t0} ms: TestUSDC ${(r.TestUSDC.bytecode.length - 2) / 2} bytes, MockAggregator ${(r.MockAggregator.bytecode.length - 2) / 2} bytes`);
}
