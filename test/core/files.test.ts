/**
 * src/core/files.ts: the one way secrets and state files are written (whole or not at all,
 * owner only, never through a planted symlink) and private directories and files are made.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensurePrivateDir, ensurePrivateFile, writeFileAtomic } from '../../src/core/files.js';
import { modeOf, tempDirs } from '../helpers/temp-dirs.js';

const temp = tempDirs('agentpay-files-');
afterEach(() => temp.removeAll());
const tempDir = temp.make;
const mode = modeOf;

describe('writeFileAtomic', () => {
  it('writes the content with mode 0600 by default and leaves nothing else in the directory', () => {
    const dir = tempDir();
    const p = join(dir, 'secret.txt');
    writeFileAtomic(p, 'hello\n');
    expect(readFileSync(p, 'utf8')).toBe('hello\n');
    expect(mode(p)).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['secret.txt']);
  });

  it('sets the mode given exactly and writes bytes as given', () => {
    const dir = tempDir();
    const p = join(dir, 'blob');
    writeFileAtomic(p, new Uint8Array([0, 1, 2, 255]), { mode: 0o640 });
    expect([...readFileSync(p)]).toEqual([0, 1, 2, 255]);
    expect(mode(p)).toBe(0o640);
  });

  it('replaces an existing file, a wider one included, with the new content and mode', () => {
    const dir = tempDir();
    const p = join(dir, 'state.json');
    writeFileSync(p, 'old', { mode: 0o644 });
    writeFileAtomic(p, 'new');
    expect(readFileSync(p, 'utf8')).toBe('new');
    expect(mode(p)).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('with exclusive, refuses an existing file with EEXIST, keeps it unchanged and leaves no temporary file', () => {
    const dir = tempDir();
    const p = join(dir, 'key.pem');
    writeFileAtomic(p, 'first', { exclusive: true });
    expect(() => writeFileAtomic(p, 'second', { exclusive: true })).toThrow(expect.objectContaining({ code: 'EEXIST' }));
    expect(readFileSync(p, 'utf8')).toBe('first');
    expect(readdirSync(dir)).toEqual(['key.pem']);
  });

  it('removes its temporary file and throws when the final rename fails', () => {
    const dir = tempDir();
    const p = join(dir, 'taken');
    mkdirSync(join(p, 'sub'), { recursive: true }); // a non-empty directory cannot be renamed over
    expect(() => writeFileAtomic(p, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['taken']);
  });

  it('never writes through symlinks planted at predictable temporary names', () => {
    const dir = tempDir();
    const victim = join(tempDir(), 'victim');
    writeFileSync(victim, 'untouched');
    const p = join(dir, 'creds.json');
    for (const name of ['creds.json.tmp', `creds.json.${process.pid}.tmp`, '.creds.json.tmp']) symlinkSync(victim, join(dir, name));
    writeFileAtomic(p, 'secret');
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(readFileSync(p, 'utf8')).toBe('secret');
  });
});

describe('ensurePrivateDir', () => {
  it('creates missing directories, parents included, with mode 0700', () => {
    const base = tempDir();
    ensurePrivateDir(join(base, 'a', 'b'));
    expect(mode(join(base, 'a'))).toBe(0o700);
    expect(mode(join(base, 'a', 'b'))).toBe(0o700);
  });

  it('leaves an existing directory and its mode alone (it may be the user working directory)', () => {
    const base = tempDir();
    const d = join(base, 'project');
    mkdirSync(d, { mode: 0o755 });
    ensurePrivateDir(d);
    expect(mode(d)).toBe(0o755);
  });
});

describe('ensurePrivateFile', () => {
  it('with create, makes a missing file empty with mode 0600', () => {
    const p = join(tempDir(), 'db');
    ensurePrivateFile(p, { create: true });
    expect(readFileSync(p, 'utf8')).toBe('');
    expect(mode(p)).toBe(0o600);
  });

  it('narrows a file group or others can read to 0600 and keeps its content; a missing file stays missing without create', () => {
    const dir = tempDir();
    const p = join(dir, 'db');
    writeFileSync(p, 'data', { mode: 0o644 });
    ensurePrivateFile(p, { create: true });
    expect(mode(p)).toBe(0o600);
    expect(readFileSync(p, 'utf8')).toBe('data');
    ensurePrivateFile(join(dir, 'db-wal'));
    expect(readdirSync(dir)).toEqual(['db']);
  });
});
