/**
 * The OpenAPI document with a client generator from npm: openapi-typescript turns what
 * `agentpay openapi` prints into TypeScript types, and a small client compiles against them
 * (tsc --noEmit, strict) using the contract's shapes by name (components['schemas']['Receipt'],
 * …) and an error answer narrowed to its status's codes. A shape left anonymous, or a $ref
 * that does not resolve, fails the generator or the compile.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'agentpay-openapi-types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CLIENT = `import type { components, paths } from './api.js';

type Schemas = components['schemas'];
export type Receipt = Schemas['Receipt'];
type ReceiptAnswer = paths['/v1/receipts/{id}']['get']['responses'][200]['content']['application/json'];
type Unauthorized = paths['/v1/receipts/{id}']['get']['responses'][401]['content']['application/json'];

export const receiptOf = (a: ReceiptAnswer): Receipt => a.receipt;
export const amountOf = (r: Receipt): string => r.amount.amountMinor;
export const ok: Receipt['status'] = 'success';
// @ts-expect-error: a receipt's status is success or failed
export const wrong: Receipt['status'] = 'pending';
export const nonceOf = (p: Schemas['PaymentProof']): string => p.challenge.nonce;
export const challengeOf = (c: Schemas['PriceChallenge']): Schemas['UnsignedPriceChallenge']['amountMinor'] => c.amountMinor;
export const heldOf = (a: Schemas['Authorization']): string => a.amountMinor;
export const balanceOf = (w: Schemas['WalletWithBalance']): Schemas['Balance'] => w.balance;
export const codeOf = (e: Schemas['ErrorEnvelope']): string => e.error.code;
export const detailsOf = (e: Schemas['ErrorEnvelope']): Schemas['ErrorObject']['details'] => e.error.details;
// the 401 answer is the envelope with its code narrowed to the one code of that status
export const unauthorized = (u: Unauthorized): 'UNAUTHORIZED' => u.error.code;
`;

it('generates TypeScript types from the document with openapi-typescript, and a client using the named shapes compiles', () => {
  const doc = join(dir, 'openapi.json');
  const printed = spawnSync(process.execPath, [join(root, 'bin/run.js'), 'openapi', '--output', doc], { encoding: 'utf8' });
  expect(printed.status, printed.stderr).toBe(0);

  const generator = join(dirname(require.resolve('openapi-typescript/package.json')), 'bin', 'cli.js');
  const generated = spawnSync(process.execPath, [generator, doc, '--output', join(dir, 'api.ts')], { encoding: 'utf8', cwd: dir });
  expect(generated.status, generated.stderr + generated.stdout).toBe(0);

  writeFileSync(join(dir, 'client.ts'), CLIENT);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false, types: [] },
    files: ['client.ts'],
  }));
  const tsc = require.resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', cwd: dir });
  expect(compiled.status, compiled.stdout + compiled.stderr).toBe(0);

  // and the compile is not vacuous: a misuse of a named shape fails it
  writeFileSync(join(dir, 'client.ts'), `${CLIENT}export const bad = (r: Receipt): number => r.amount.amountMinor;\n`);
  const refused = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8', cwd: dir });
  expect(refused.status).not.toBe(0);
  expect(refused.stdout).toContain("Type 'string' is not assignable to type 'number'");
}, 120_000);
