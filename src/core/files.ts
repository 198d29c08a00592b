/**
 * Files that must survive a crash whole and be readable by their owner only: keys,
 * secrets, credentials, the gateway's own state. One place for the careful way to
 * write them, so no caller gets it half right.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface WriteFileAtomicOptions {
  /** the file's mode (default 0o600: owner only); set exactly, whatever the umask */
  mode?: number;
  /**
   * Never replace an existing file: throws an error with code 'EEXIST' if `path` exists
   * (as `flag: 'wx'` would), and two writers racing get one winner. Default false.
   */
  exclusive?: boolean;
}

/**
 * Writes `data` to `path` so that, after a crash or power loss at any moment, `path` is
 * either its old self (or absent) or the whole new content, never empty or partial:
 * the content goes to a temporary file in the same directory (random name, created with
 * O_EXCL, so a symlink planted there is never followed), is fsynced, is renamed over
 * `path` (linked, with `exclusive`), and the directory is fsynced so the new name
 * survives too. On any error the temporary file is removed and the error is thrown.
 *
 * The directory must exist (`ensurePrivateDir`). Synchronous: callers are start-up paths
 * and CLI commands. Example: `writeFileAtomic(join(dir, 'config.json'), JSON.stringify(c) + '\n')`.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, opts: WriteFileAtomicOptions = {}): void {
  const mode = opts.mode ?? 0o600;
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  // 'wx' = O_CREAT | O_EXCL: fails rather than open an existing file or follow a symlink
  const fd = openSync(tmp, 'wx', mode);
  try {
    try {
      fchmodSync(fd, mode); // the umask may have narrowed the mode given to open
      const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
      for (let off = 0; off < buf.byteLength; ) off += writeSync(fd, buf, off, buf.byteLength - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (opts.exclusive) placeExclusively(tmp, path);
    else renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  rmSync(tmp, { force: true }); // the second name of a linked file; nothing after a rename
  fsyncDir(dir);
}

/**
 * Gives `tmp` the name `path` unless `path` exists: a hard link fails with EEXIST atomically.
 * A file system without hard links (some network and container mounts) gets a check and a
 * rename instead, which two writers in the same instant could both pass.
 */
function placeExclusively(tmp: string, path: string): void {
  try {
    linkSync(tmp, path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw e;
    if (existsSync(path)) throw Object.assign(new Error(`EEXIST: file already exists, '${path}'`), { code: 'EEXIST', path });
    renameSync(tmp, path);
  }
}

/**
 * Creates `dir` (and missing parents) with mode 0o700 and makes the new entries durable;
 * an existing directory is left as it is (its mode included: it may be the user's own).
 */
export function ensurePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  // every directory made, from `dir` up to the first, is an entry in its parent
  for (let d = dir; ; d = dirname(d)) {
    fsyncDir(dirname(d));
    if (d === first) break;
  }
}

/** Makes a directory entry change (create, rename, unlink) in `dir` durable. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes `path` readable by its owner only: with `create`, a missing file is created empty
 * with mode 0o600; an existing one that group or others may access is chmodded to 0o600.
 * For files another library opens (the SQLite database) and that must not start out wider.
 */
export function ensurePrivateFile(path: string, opts: { create?: boolean } = {}): void {
  if (opts.create && !existsSync(path)) {
    // 'a' creates without truncating: a file made meanwhile by another process is kept
    closeSync(openSync(path, 'a', 0o600));
  }
  if (existsSync(path) && (statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
}

/**
 * A text file's content. Node leaves the path out of some read errors (reading a directory
 * gives a bare EISDIR), so the error is given the path it is about: whoever reports it can
 * then name the file.
 */
export function readTextFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if (e && typeof e === 'object' && !('path' in e)) Object.assign(e, { path });
    throw e;
  }
}
