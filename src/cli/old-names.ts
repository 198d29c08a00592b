/**
 * Old names of settings, still accepted (docs/configuration.md). A value given under an old
 * name works as before, and the CLI says once per process, in one line on stderr (stdout stays
 * the command's result, JSON or not), which name to use instead.
 */

/** environment variable: old name -> the name to use */
export const OLD_ENV_NAMES = { AGENTPAY_BASE_URL: 'AGENTPAY_GATEWAY_URL' } as const;
/** flag (without --): old name -> the name to use */
export const OLD_FLAG_NAMES = { 'base-url': 'gateway-url' } as const;

const told = new Set<string>();
let write: (line: string) => void = (line) => process.stderr.write(line);

/** Prints the notice for `oldName` once per process. */
export function oldNameNotice(oldName: string, newName: string, extra = ''): void {
  if (told.has(oldName)) return;
  told.add(oldName);
  write(`notice: ${oldName} is the old name of ${newName}; it still works, but use ${newName}${extra}\n`);
}

/** For tests: where notices go, and forget the ones given. */
export function captureOldNameNotices(to: (line: string) => void): void {
  write = to;
  told.clear();
}

/**
 * The value of environment setting `name`, also read under its old names. An old name is used
 * only when `name` is unset (empty counts as unset, as oclif reads variables); either way a set
 * old name gets its notice. Returns the value and the variable it came from.
 */
export function envSetting(env: NodeJS.ProcessEnv, name: string): { value: string; from: string } | undefined {
  const olds = Object.entries(OLD_ENV_NAMES).filter(([, now]) => now === name).map(([old]) => old);
  const chosen = env[name] ? name : olds.find((old) => env[old]);
  for (const old of olds) {
    if (env[old]) oldNameNotice(old, name, chosen === old ? '' : ` (${old} is ignored: ${name} is set)`);
  }
  return chosen ? { value: env[chosen]!, from: chosen } : undefined;
}

/** Notices for old flag names typed on the command line (before a lone `--`). */
export function noticeOldFlags(argv: readonly string[]): void {
  const end = argv.indexOf('--');
  const typed = end === -1 ? argv : argv.slice(0, end);
  for (const [old, now] of Object.entries(OLD_FLAG_NAMES)) {
    if (typed.some((a) => a === `--${old}` || a.startsWith(`--${old}=`))) oldNameNotice(`--${old}`, `--${now}`);
  }
}
