/**
 * Every prompt is also a flag. A value given by flag is used as is; a missing one is
 * asked for only when stdin is a terminal (prompts render on stderr so stdout stays
 * clean for JSON). Without a terminal the answer is an error naming the flag: a script
 * never hangs waiting for input.
 */
import { usageError } from './errors/index.js';

export function canPrompt(): boolean {
  return Boolean(process.stdin.isTTY) && !process.env.CI;
}

function missing(flag: string, what: string): Error {
  return usageError(`${flag} is required (there is no terminal to ask on)`, `pass ${flag} <${what}>`, { flag });
}

const context = () => ({ output: process.stderr });

export async function askText(opts: { flag: string; message: string; value?: string | undefined; default?: string; optional?: boolean; validate?: (v: string) => true | string }): Promise<string> {
  if (opts.value !== undefined) return opts.value;
  // a default is offered on a terminal only: a script never gets a value it did not pass
  if (!canPrompt()) throw missing(opts.flag, opts.message);
  const { input } = await import('@inquirer/prompts');
  return input(
    { message: opts.message, required: !opts.optional, ...(opts.default !== undefined ? { default: opts.default } : {}), ...(opts.validate ? { validate: opts.validate } : {}) },
    context(),
  );
}

export async function askSecret(opts: { flag: string; message: string; value?: string | undefined; validate?: (v: string) => true | string }): Promise<string> {
  if (opts.value !== undefined) return opts.value;
  if (!canPrompt()) throw missing(opts.flag, opts.message);
  const { password } = await import('@inquirer/prompts');
  return password({ message: opts.message, mask: '*', ...(opts.validate ? { validate: opts.validate } : {}) }, context());
}

export async function askChoice<T extends string>(opts: { flag: string; message: string; value?: T | undefined; choices: readonly T[] }): Promise<T> {
  if (opts.value !== undefined) return opts.value;
  if (!canPrompt()) throw missing(opts.flag, opts.choices.join('|'));
  const { select } = await import('@inquirer/prompts');
  return select({ message: opts.message, choices: opts.choices.map((c) => ({ value: c, name: c })) }, context());
}

export async function askConfirm(opts: { flag: string; message: string; value?: boolean | undefined; default: boolean }): Promise<boolean> {
  if (opts.value !== undefined) return opts.value;
  if (!canPrompt()) return opts.default;
  const { confirm } = await import('@inquirer/prompts');
  return confirm({ message: opts.message, default: opts.default }, context());
}
