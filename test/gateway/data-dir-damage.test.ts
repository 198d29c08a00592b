/**
 * A data directory damaged between starts: the gateway refuses to start, naming what is
 * wrong and changing nothing, rather than starting over or signing with a key nobody can
 * verify. An empty or missing database in a directory used before (the ledger is lost), a
 * mode marker that says neither mode, a signing key file that is not the registered key.
 */
import { existsSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateEd25519 } from '../../src/core/ed25519.js';
import { startGateway } from '../../src/gateway/server.js';
import { tempDirs } from '../helpers/temp-dirs.js';

const dirs = tempDirs('agentpay-damage-');
afterEach(() => dirs.removeAll());

const start = (dataDir: string) => startGateway({ dataDir, tls: false, httpPort: null, port: 0, config: { mode: 'sandbox' } });

/** A data directory after one clean start and stop. */
async function usedDir(): Promise<string> {
  const dataDir = dirs.make();
  await (await start(dataDir)).close();
  return dataDir;
}

async function refusal(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    const gw = (await p) as { close(): Promise<void> };
    await gw.close();
  } catch (e) {
    return e as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected the start to be refused');
}

describe('a data directory whose database is gone', () => {
  it('refuses to start on an emptied database, naming it and what shows the directory was used, and leaves it empty', async () => {
    const dataDir = await usedDir();
    truncateSync(join(dataDir, 'agentpay.db'), 0);
    const e = await refusal(start(dataDir));
    expect(e.code).toBe('CONFLICT');
    expect(e.message).toContain(`${join(dataDir, 'agentpay.db')} is empty`);
    expect(e.message).toContain('Restore agentpay.db');
    expect(e.details.traces).toEqual(expect.arrayContaining(['mode', 'keys/']));
    expect(readFileSync(join(dataDir, 'agentpay.db')).length).toBe(0);
  });

  it('refuses a missing database the same way, and starts a brand-new directory as before', async () => {
    const dataDir = await usedDir();
    for (const f of readdirSync(dataDir).filter((n) => n.startsWith('agentpay.db'))) rmSync(join(dataDir, f));
    expect((await refusal(start(dataDir))).message).toContain('is missing');
    expect(existsSync(join(dataDir, 'agentpay.db'))).toBe(false);
    await (await start(dirs.make())).close();
  });
});

describe('a mode marker that names neither mode', () => {
  it('is refused by name, not taken for production, and left as it is', async () => {
    const dataDir = await usedDir();
    writeFileSync(join(dataDir, 'mode'), 'banana\n');
    const e = await refusal(start(dataDir));
    expect(e.code).toBe('CONFLICT');
    expect(e.message).toContain('says "banana", not sandbox or production');
    expect(readFileSync(join(dataDir, 'mode'), 'utf8')).toBe('banana\n');
  });
});

describe('a damaged signing key file', () => {
  const keyFile = (dataDir: string) => {
    const name = readdirSync(join(dataDir, 'keys')).find((f) => f.endsWith('.pem'))!;
    return { path: join(dataDir, 'keys', name), id: name.replace(/\.pem$/, '') };
  };

  it('stops the start naming the key when the file is not a private key', async () => {
    const dataDir = await usedDir();
    const { path, id } = keyFile(dataDir);
    writeFileSync(path, 'garbage');
    const e = await refusal(start(dataDir));
    expect(e.message).toBe(`the private key file of signing key ${id} (keys/${id}.pem in the data directory) is not a private key; restore it from a backup of the data directory`);
  });

  it('stops the start when the file holds another ed25519 key than the one registered', async () => {
    const dataDir = await usedDir();
    const { path, id } = keyFile(dataDir);
    writeFileSync(path, generateEd25519().privateKeyPem);
    const e = await refusal(start(dataDir));
    expect(e.message).toContain(`signing key ${id}`);
    expect(e.message).toContain('holds another key than the one the database registered');
  });
});
