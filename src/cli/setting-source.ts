/**
 * Where a setting's value came from (a flag, its environment variable, a config file),
 * so that an error about a bad value names the place the person has to change: a bad
 * AGENTPAY_PORT is reported as AGENTPAY_PORT, not as a --port flag nobody typed.
 */

export type SettingSource =
  /** typed on the command line, or the flag's default */
  | { from: 'flag'; flag: string }
  /** the flag's environment variable (oclif reads it when the flag is not typed), and its text */
  | { from: 'env'; flag: string; env: string; text?: string | undefined }
  /** a key of a JSON config file */
  | { from: 'file'; flag: string; file: string; key: string };

/** The setting as an error names it: `--port`, `AGENTPAY_PORT`, `"port" in /etc/agentpay.json`. */
export function settingName(s: SettingSource): string {
  if (s.from === 'env') return s.env;
  if (s.from === 'file') return `"${s.key}" in ${s.file}`;
  return s.flag;
}

/** The setting as it is set now: settingWithValue, but a variable as typed (AGENTPAY_TLS=0, not =false). */
export function settingAsSet(s: SettingSource, value: string | number | boolean): string {
  return s.from === 'env' && s.text !== undefined ? `${s.env}=${s.text}` : settingWithValue(s, value);
}

/** The setting with a value, as it is written there: `--port 80`, `AGENTPAY_PORT=80`, `"port": 80 in FILE`. */
export function settingWithValue(s: SettingSource, value: string | number | boolean): string {
  if (s.from === 'env') return `${s.env}=${String(value)}`;
  if (s.from === 'file') return `"${s.key}": ${JSON.stringify(value)} in ${s.file}`;
  if (typeof value === 'boolean') return value ? s.flag : s.flag.replace(/^--/, '--no-');
  return `${s.flag} ${value}`;
}

/** Error details naming the setting: always the flag, plus the variable or the file and key. */
export function settingDetails(s: SettingSource): Record<string, string> {
  if (s.from === 'env') return { flag: s.flag, env: s.env };
  if (s.from === 'file') return { flag: s.flag, file: s.file, field: s.key };
  return { flag: s.flag };
}

/**
 * The flags whose value came from their environment variable: the variable is set (not empty,
 * as oclif reads it) and the flag was not typed, so oclif took the variable. Flag name -> variable.
 */
export function flagsFromEnv(
  argv: readonly string[],
  flags: Record<string, { env?: string | undefined; char?: string | undefined }>,
  env: NodeJS.ProcessEnv = process.env,
): Map<string, string> {
  const end = argv.indexOf('--');
  const typed = end === -1 ? argv : argv.slice(0, end);
  const isTyped = (name: string, char: string | undefined) =>
    typed.some((a) => a === `--${name}` || a.startsWith(`--${name}=`) || a === `--no-${name}` || (char !== undefined && /^-[^-]/.test(a) && a.includes(char)));
  const out = new Map<string, string>();
  for (const [name, def] of Object.entries(flags)) {
    if (def.env && env[def.env] && !isTyped(name, def.char)) out.set(name, def.env);
  }
  return out;
}
