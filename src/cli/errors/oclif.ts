/**
 * oclif's own parse errors (unknown flag, missing argument, bad option value) in the CLI's
 * words, naming the flag, the argument or the environment variable the person has to change.
 */
import { Errors } from '@oclif/core';
import { closest } from '../suggest.js';
import { EXIT } from './cli-error.js';
import type { Report, ReportContext } from './report.js';

/**
 * oclif's refusal of a flag value that came from the flag's environment variable (the flag was
 * not typed): reported as that variable, which is what the person has to change. `parsed` is a
 * "--flag: problem" message of a value oclif could not parse; `raw` may instead be oclif's
 * "Expected --flag=VALUE to be one of: A, B" for an option.
 */
function envFlagError(raw: string, parsed: string | undefined, ctx: ReportContext): Report | undefined {
  if (!ctx.envFlags?.size) return undefined;
  const option = /^Expected --([\w-]+)=([\s\S]*) to be one of: (.*)$/.exec(raw);
  const name = option?.[1] ?? (parsed ? /^--([\w-]+):/.exec(parsed)?.[1] : undefined);
  const env = name === undefined ? undefined : ctx.envFlags.get(name);
  if (!name || !env) return undefined;
  const problem = option
    ? ` must be one of: ${option[3]}, got ${JSON.stringify(option[2])}`
    : `: ${parsed!.slice(name.length + 3).trimStart()}`;
  return {
    code: 'USAGE',
    message: `the environment variable ${env} (read for --${name})${problem}`,
    details: { flag: `--${name}`, env },
    exit: EXIT.USAGE,
    tryNext: `correct ${env}, or unset it (unset ${env}); a --${name} typed on the command line overrides it`,
  };
}

/**
 * oclif's NonExistentFlagsError ("Nonexistent flag: --limt") in the CLI's words, with the
 * nearest flag the command accepts: `unknown flag --limt; did you mean --limit?`,
 * `details: {flag, suggestion}`.
 */
function unknownFlagReport(err: Errors.CLIError, raw: string, ctx: ReportContext, help: string): Report | undefined {
  const flags = (err as { flags?: unknown }).flags;
  if (!/^Nonexistent flags?: /.test(raw) || !Array.isArray(flags) || !flags.every((f): f is string => typeof f === 'string') || !flags.length) return undefined;
  const names = flags.map((f) => f.replace(/=.*$/s, ''));
  const guesses = names.map((name) => {
    const guess = name.startsWith('--') && ctx.knownFlags ? closest(name.slice(2), ctx.knownFlags) : undefined;
    return guess === undefined ? undefined : `--${guess}`;
  });
  const message = names.length === 1
    ? `unknown flag ${names[0]}` + (guesses[0] ? `; did you mean ${guesses[0]}?` : '')
    : `unknown flags ${names.map((n, i) => (guesses[i] ? `${n} (did you mean ${guesses[i]}?)` : n)).join(', ')}`;
  return {
    code: 'USAGE',
    message,
    details: { flag: names[0], ...(guesses[0] ? { suggestion: guesses[0] } : {}) },
    exit: EXIT.USAGE,
    tryNext: help,
  };
}

/** An oclif CLIError as a Report; `help` is the command's help invocation, the next step of a usage error. */
export function parseErrorReport(err: Errors.CLIError, ctx: ReportContext, help: string): Report {
  // a flag value oclif's own parser refused reads "Parsing --limit \n\tExpected an integer ...": one line naming the flag
  const raw = err.message.replace(/\n+See more help with --help$/, '');
  const parsing = /^Parsing (--[\w-]+)\s*\n\s*([\s\S]*)$/.exec(raw);
  const message = parsing
    ? `${parsing[1]}: ${parsing[2]!.charAt(0).toLowerCase()}${parsing[2]!.slice(1).replace(/\s*\n\s*/g, '; ')}`
    : raw;
  const fromEnv = envFlagError(raw, parsing ? message : undefined, ctx);
  if (fromEnv) return fromEnv;
  const unknown = unknownFlagReport(err, raw, ctx, help);
  if (unknown) return unknown;
  // oclif's RequiredArgsError lists the missing args (`args: [{name}]`), named in the help's usage line in capitals
  const missing = /^Missing \d+ required arg/.test(message) ? (err as { args?: Array<{ name?: unknown }> }).args?.[0]?.name : undefined;
  const details = typeof missing === 'string' ? { arg: missing.toUpperCase() } : parsing ? { flag: parsing[1] } : {};
  return { code: 'USAGE', message, details, exit: err.oclif?.exit === 0 ? 0 : EXIT.USAGE, tryNext: help };
}
