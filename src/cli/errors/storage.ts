/** A file or database the person can fix (not a bug): Node's file-system errors and SQLite's refusals, in plain words. */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { CliError } from './cli-error.js';

/** File-system errors in plain words, and what to do about them (`PATH` is replaced by the path). */
const FILE_ERRORS: Record<string, { cause: string; tryNext: string }> = {
  EISDIR: { cause: 'is a directory, expected a file', tryNext: 'move the directory at PATH away (restore the file from a backup if it held data)' },
  ENOTDIR: { cause: 'a part of this path is a file, expected a directory', tryNext: 'move the file that is in the way of PATH aside' },
  EEXIST: { cause: 'already exists', tryNext: 'move PATH aside' },
  EACCES: { cause: 'permission denied', tryNext: 'run as the user that owns PATH, or give yours access (ls -ld PATH shows owner and mode)' },
  EPERM: { cause: 'operation not permitted', tryNext: 'run as the user that owns PATH, or give yours access (ls -ld PATH shows owner and mode)' },
  EROFS: { cause: 'is on a read-only file system', tryNext: 'use a writable location (e.g. another --data-dir)' },
  ENOENT: { cause: 'does not exist', tryNext: 'check the path' },
  ENOSPC: { cause: 'no space left on the device', tryNext: 'free some disk space, then retry' },
  EDQUOT: { cause: 'disk quota exceeded', tryNext: 'free some disk space, then retry' },
  EMFILE: { cause: 'too many open files', tryNext: 'raise the open-file limit (ulimit -n), then retry' },
  ENFILE: { cause: 'too many open files on this system', tryNext: 'close other programs or raise the system open-file limit, then retry' },
  ELOOP: { cause: 'too many symbolic links (a link pointing to itself?)', tryNext: 'check the symbolic links on PATH' },
  ENAMETOOLONG: { cause: 'the name is too long', tryNext: 'use a shorter path' },
  ENOTEMPTY: { cause: 'is a directory that is not empty', tryNext: 'move PATH aside' },
  EBUSY: { cause: 'is in use', tryNext: 'stop the program using PATH, then retry' },
  EIO: { cause: 'input/output error (is the disk failing?)', tryNext: 'check the disk, then retry' },
};
/** syscalls of the file system: the same codes from sockets or child processes are not about a file */
const FILE_SYSCALLS = new Set([
  'open', 'read', 'write', 'close', 'rename', 'mkdir', 'rmdir', 'unlink', 'rm', 'stat', 'lstat', 'fstat', 'scandir', 'opendir',
  'readdir', 'copyfile', 'cp', 'link', 'symlink', 'readlink', 'realpath', 'chmod', 'fchmod', 'chown', 'fchown', 'utime', 'futime',
  'fsync', 'fdatasync', 'ftruncate', 'access', 'mkdtemp',
]);
/** a temporary file of writeFileAtomic (src/core/files.ts), `.NAME.RANDOM.tmp`, stands for the file it becomes */
const ATOMIC_TMP = /^\.(.+)\.[0-9a-f]{16}\.tmp$/;

/**
 * SQLite's (better-sqlite3's) codes for a database file it cannot use; an extended code
 * (SQLITE_CANTOPEN_ISDIR) counts as its primary one. Other SQLite errors (constraints, SQL)
 * are agentpay's own bugs.
 */
const DATABASE_ERRORS: Record<string, { cause: string; tryNext?: string }> = {
  SQLITE_NOTADB: { cause: 'is not an SQLite database' },
  SQLITE_CORRUPT: { cause: 'is corrupt' },
  SQLITE_CANTOPEN: { cause: 'cannot be opened', tryNext: 'check that agentpay.db and its -wal and -shm files are files your user can read and write, in a directory it can write' },
  SQLITE_READONLY: { cause: 'is read-only', tryNext: 'give your user write access to agentpay.db, its -wal and -shm files and their directory' },
  SQLITE_PERM: { cause: 'cannot be accessed (permission denied)', tryNext: 'give your user write access to agentpay.db, its -wal and -shm files and their directory' },
  SQLITE_FULL: { cause: 'cannot grow: the disk is full', tryNext: 'free some disk space, then retry' },
  SQLITE_IOERR: { cause: 'cannot be read or written (input/output error)', tryNext: 'check the disk and the file agentpay.db, then retry' },
  SQLITE_BUSY: { cause: 'is locked by another process', tryNext: 'stop the other process using the data dir, then retry' },
};
const RESTORE_DATABASE = 'restore agentpay.db (with its -wal file) from a backup; a development data dir can instead be removed and made anew, without its data, by agentpay dev';

/**
 * A file the person can fix, not a bug: a Node file-system error (EISDIR, EACCES, ENOSPC…)
 * becomes FILE_ERROR naming the path, and SQLite's refusal of the database file becomes
 * DATABASE_ERROR naming the data dir's database when `dataDir` is known. Undefined for any other error.
 */
export function storageError(err: unknown, dataDir?: string): CliError | undefined {
  if (!(err instanceof Error)) return undefined;
  return databaseError(err, dataDir) ?? fileError(err, dataDir);
}

function databaseError(err: Error, dataDir: string | undefined): CliError | undefined {
  const code = String((err as { code?: unknown }).code ?? '');
  const known = Object.entries(DATABASE_ERRORS).find(([c]) => code === c || code.startsWith(`${c}_`))?.[1];
  if (!known) return undefined;
  const path = dataDir ? join(dataDir, 'agentpay.db') : undefined;
  return new CliError('DATABASE_ERROR', `the gateway's database${path ? ` ${path}` : ''} ${known.cause} (${code})`, {
    tryNext: known.tryNext ?? RESTORE_DATABASE,
    details: { ...(path ? { path } : {}), cause: code },
  });
}

function fileError(err: Error, dataDir: string | undefined): CliError | undefined {
  const e = err as NodeJS.ErrnoException & { dest?: unknown };
  const code = e.code ?? '';
  const known = FILE_ERRORS[code];
  if (!known || typeof e.syscall !== 'string' || !FILE_SYSCALLS.has(e.syscall)) return undefined;
  // a rename names its source first: the file it could not become is its destination
  let path = typeof e.dest === 'string' ? e.dest : e.path;
  const tmp = path ? ATOMIC_TMP.exec(basename(path)) : null;
  if (path && tmp) path = join(dirname(path), tmp[1]!);
  // mkdir over a file says EEXIST
  const overFile = code === 'EEXIST' && e.syscall === 'mkdir';
  // a file or directory that could not be made: the permissions that matter are its nearest existing parent's
  let fix = path;
  if (fix && /^(EACCES|EPERM|EROFS)$/.test(code)) while (!existsSync(fix) && dirname(fix) !== fix) fix = dirname(fix);
  const tryNext = fix
    ? overFile
      ? `move the file ${fix} aside; agentpay makes the directory itself`
      : known.tryNext.replace(/PATH/g, fix)
    : code === 'EISDIR'
      ? `find the directory where a file belongs${dataDir ? ` in ${dataDir}` : ''} and move it away`
      : known.tryNext.replace(/PATH/g, 'the file');
  // reading a directory (or writing to a full disk) fails on an open file, without its path
  const where = path ?? `a file${dataDir ? ` in ${dataDir}` : ''}`;
  return new CliError('FILE_ERROR', `${where}: ${overFile ? 'is a file, expected a directory' : known.cause}`, {
    tryNext,
    details: { ...(path ? { path } : {}), cause: code, syscall: e.syscall },
  });
}
