/** A bench flag: `--name value`, else the environment's BENCH_NAME (e.g. BENCH_MAX_SECONDS), else the default. */
export function flagReader<K extends string>(flags: Partial<Record<K, string | boolean>>) {
  const opt = (name: K, fallback: string): string => {
    const env = process.env[`BENCH_${name.toUpperCase().replace(/-/g, '_')}`];
    return (flags[name] as string | undefined) ?? env ?? fallback;
  };
  const num = (name: K, fallback: number): number => {
    const v = Number(opt(name, String(fallback)));
    if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name} must be a positive number`);
    return v;
  };
  return { opt, num };
}
