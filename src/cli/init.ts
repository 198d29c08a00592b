/**
 * `agentpay init`: a new seller project from a template under templates/<name>/.
 *
 * The template convention (shared by every template; keep it exactly):
 * - templates/<name>/template.json describes it, `{"description": "...", "defaults": {...}}`, and is
 *   not copied;
 * - every other file is copied with `{{name}}`, `{{priceMinor}}`, `{{category}}`, `{{description}}`
 *   and `{{agentpayDependency}}` replaced; other `{{...}}` text is left alone;
 * - a file named `_gitignore` becomes `.gitignore` (npm would drop a `.gitignore` from our package).
 *
 * Values are single lines (validated). In JSON and JavaScript/TypeScript files they are written
 * string-escaped, so a placeholder must sit inside a string literal there; in code files quotes,
 * backticks and `$` are escaped too, so any kind of string literal stays intact.
 *
 * Everything is validated, and the target checked, before the first file is written: a refusal
 * leaves the disk untouched.
 */
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { MAX_MINOR } from '../core/money.js';
import { packageRoot } from '../paths.js';
import { CliError, usageError } from './errors.js';
import { askChoice, askText, canPrompt } from './prompts.js';

export const PLACEHOLDERS = ['name', 'priceMinor', 'category', 'description', 'agentpayDependency'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplateValues = Record<Placeholder, string>;

/** Fields a template's defaults may set (agentpayDependency is the CLI's to decide). */
type Defaults = Partial<Record<Exclude<Placeholder, 'agentpayDependency'>, string>>;

export interface TemplateInfo {
  name: string;
  dir: string;
  description: string;
  defaults: Defaults;
}

/** Env that sets `{{agentpayDependency}}`, e.g. `file:/path/to/agentpay` to test a checkout. */
export const DEPENDENCY_ENV = 'AGENTPAY_INIT_DEPENDENCY';

export const templatesDir = (): string => join(packageRoot(), 'templates');

/** Every directory of templates/ that has a template.json, by name. */
export function listTemplates(root: string = templatesDir()): TemplateInfo[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'template.json')))
    .map((d) => readTemplate(join(root, d.name)))
    .sort((a, b) => a.name.localeCompare(b.name));
}

function readTemplate(dir: string): TemplateInfo {
  const name = basename(dir);
  let meta: { description?: unknown; defaults?: Record<string, unknown> };
  try {
    meta = JSON.parse(readFileSync(join(dir, 'template.json'), 'utf8')) as typeof meta;
  } catch (e) {
    throw new Error(`agentpay: templates/${name}/template.json is not valid JSON: ${(e as Error).message}`);
  }
  const defaults: Defaults = {};
  for (const key of ['name', 'priceMinor', 'category', 'description'] as const) {
    const v = meta.defaults?.[key];
    if (typeof v === 'string') defaults[key] = v;
  }
  return { name, dir, description: typeof meta.description === 'string' ? meta.description : '', defaults };
}

// ---- validation: `true` or what is wrong (inquirer's validate shape) ----

const NPM_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;

function line(v: string, max: number): true | string {
  const s = v.trim();
  if (!s) return 'must not be empty';
  if (CONTROL.test(s)) return 'must be one line, without control characters';
  if (s.length > max) return `must be at most ${max} characters`;
  return true;
}

export const validators: Record<Placeholder, (v: string) => true | string> = {
  name: (v) => {
    v = v.trim();
    if (v.length === 0 || v.length > 200) return 'must be 1 to 200 characters';
    return NPM_NAME.test(v) ? true : 'must be a valid npm package name: lowercase letters, digits, "-", "." or "_", e.g. "weather-api"';
  },
  priceMinor: (v) => {
    v = v.trim();
    if (!/^[1-9][0-9]*$/.test(v)) {
      return `must be a whole number of minor units greater than zero, e.g. 100 for 1.00 USD${v.includes('.') ? ' ("1.50" is written 150)' : ''}`;
    }
    return BigInt(v) <= MAX_MINOR ? true : `must be at most ${MAX_MINOR}`;
  },
  category: (v) => line(v, 100),
  description: (v) => line(v, 5000),
  agentpayDependency: (v) => line(v, 1000),
};

const FLAG_OF: Record<Placeholder, string> = {
  name: '--name',
  priceMinor: '--price',
  category: '--category',
  description: '--description',
  agentpayDependency: '--agentpay-dependency',
};

/** The value, trimmed, if valid; else a refusal naming the flag. */
function checked(field: Placeholder, raw: string): string {
  const value = raw.trim();
  const ok = validators[field](value);
  if (ok !== true) {
    throw new CliError('VALIDATION_FAILED', `${FLAG_OF[field]}: ${ok}; got ${JSON.stringify(value)}`, { details: { flag: FLAG_OF[field] } });
  }
  return value;
}

// ---- the target directory ----

/** Entries of dir that count as content (a fresh `git init` does not). */
function contentOf(dir: string): string[] {
  return readdirSync(dir).filter((e) => e !== '.git');
}

/** The path itself if it exists, else its nearest existing ancestor (what mkdir would have to go through). */
function nearestExisting(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

/** Refuses a path that is a file or lies under one, or a non-empty directory unless `force`. */
export function checkTarget(dir: string, force: boolean): void {
  const existing = nearestExisting(dir);
  if (!statSync(existing).isDirectory()) {
    throw new CliError('NOT_A_DIRECTORY', `${existing} exists and is not a directory`, { tryNext: 'choose another path for the new project' });
  }
  if (existing !== dir) return;
  const entries = contentOf(dir);
  if (entries.length > 0 && !force) {
    const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? ', ...' : '');
    throw new CliError('DIRECTORY_NOT_EMPTY', `${dir} is not empty (${shown}); nothing was written`, {
      tryNext: 'choose a new or empty directory, or pass --force to write the template into it (files with the same names are overwritten)',
      details: { dir, entries: entries.length },
    });
  }
}

// ---- rendering ----

const JSON_FILES = new Set(['.json']);
const CODE_FILES = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.jsx', '.tsx']);

/** A value as it is written into a file of this kind. */
function escapeFor(file: string, value: string): string {
  const ext = extname(file);
  if (JSON_FILES.has(ext)) return JSON.stringify(value).slice(1, -1);
  if (CODE_FILES.has(ext)) {
    return JSON.stringify(value)
      .slice(1, -1)
      .replace(/'/g, '\\u0027')
      .replace(/`/g, '\\u0060')
      .replace(/\$/g, '\\u0024');
  }
  return value;
}

export function renderText(text: string, file: string, values: TemplateValues): string {
  return text.replace(/\{\{(\w+)\}\}/g, (whole, key: string) =>
    (PLACEHOLDERS as readonly string[]).includes(key) ? escapeFor(file, values[key as Placeholder]) : whole,
  );
}

/** Template files, relative to its dir, in a stable order. node_modules is never part of a template. */
function templateFiles(dir: string, sub = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, sub), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = sub ? join(sub, e.name) : e.name;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') out.push(...templateFiles(dir, rel));
    } else if (e.isFile() && rel !== 'template.json') {
      out.push(rel);
    }
  }
  return out;
}

const targetName = (rel: string): string => join(dirname(rel), basename(rel) === '_gitignore' ? '.gitignore' : basename(rel));

/** Writes the rendered template into `target` (created if missing); returns the files written. */
export function renderTemplate(template: TemplateInfo, target: string, values: TemplateValues): string[] {
  const written: string[] = [];
  for (const rel of templateFiles(template.dir)) {
    const src = join(template.dir, rel);
    const out = targetName(rel);
    const dest = join(target, out);
    const bytes = readFileSync(src);
    mkdirSync(dirname(dest), { recursive: true });
    // a binary file (a NUL byte) is copied as it is
    writeFileSync(dest, bytes.includes(0) ? bytes : renderText(bytes.toString('utf8'), rel, values));
    chmodSync(dest, statSync(src).mode & 0o777); // keeps scripts executable
    written.push(out.split('\\').join('/'));
  }
  return written;
}

// ---- the command ----

export interface InitOptions {
  dir?: string | undefined;
  template?: string | undefined;
  name?: string | undefined;
  price?: string | undefined;
  category?: string | undefined;
  description?: string | undefined;
  agentpayDependency?: string | undefined;
  force?: boolean;
  /** take defaults for what was not given, never prompt */
  yes?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export interface InitResult {
  template: string;
  dir: string;
  values: TemplateValues;
  files: string[];
  nextSteps: string[];
}

function ourVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** A value from its flag, else the default (with --yes), else a prompt on a terminal, else a usage error. */
/**
 * Installed from the registry (we live under node_modules/), the new project asks for this
 * version range; run from a checkout of agentpay, it links that checkout (`file:`), so a
 * project made from a clone works before (or without) a published release.
 */
export function defaultDependency(root: string = packageRoot()): string {
  return root.split(/[\\/]/).includes('node_modules') ? `^${ourVersion()}` : `file:${root}`;
}

async function valueOf(field: Exclude<Placeholder, 'agentpayDependency'>, given: string | undefined, fallback: string, message: string, yes: boolean): Promise<string> {
  if (given !== undefined) return checked(field, given);
  if (yes) return checked(field, fallback);
  return checked(field, await askText({ flag: FLAG_OF[field], message, value: undefined, default: fallback, validate: validators[field] }));
}

export async function init(opts: InitOptions): Promise<InitResult> {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? process.env;
  const yes = Boolean(opts.yes);
  const templates = listTemplates();
  if (templates.length === 0) throw new Error(`agentpay: no templates found in ${templatesDir()}`);
  const names = templates.map((t) => t.name);

  let templateName = opts.template;
  if (templateName === undefined) {
    templateName = yes ? (names.includes('rest') ? 'rest' : names[0]!) : await askChoice({ flag: '--template', message: 'Template', value: undefined, choices: names });
  }
  const template = templates.find((t) => t.name === templateName);
  if (!template) throw usageError(`--template: there is no template "${templateName}"; choose one of ${names.join(', ')}`, `agentpay init DIR --template ${names[0]}`, { flag: '--template' });
  const d = template.defaults;

  let dirArg = opts.dir;
  if (dirArg === undefined) {
    const suggested = opts.name ?? d.name ?? `my-${template.name}-seller`;
    if (yes) dirArg = suggested;
    else if (canPrompt()) dirArg = await askText({ flag: 'DIR', message: 'Directory for the new project', default: suggested });
    else throw usageError('DIR is required (there is no terminal to ask on)', `agentpay init DIR --template ${template.name}, or add --yes to create ./${suggested}`, { arg: 'DIR' });
  }
  const dir = resolve(cwd, dirArg);
  checkTarget(dir, Boolean(opts.force)); // before any question about the contents

  const fromDir = basename(dir).toLowerCase();
  const dirIsName = validators.name(fromDir) === true;
  const nameDefault = dirIsName ? fromDir : (d.name ?? `my-${template.name}-seller`);
  // As documented, the name defaults to the directory's: without a terminal to ask on, take it
  // rather than refuse (a directory that is no valid package name still needs --name).
  const nameGiven = opts.name ?? (dirIsName && !canPrompt() ? fromDir : undefined);
  const values: TemplateValues = {
    name: await valueOf('name', nameGiven, nameDefault, 'Name (npm package and capability name)', yes),
    priceMinor: await valueOf('priceMinor', opts.price, d.priceMinor ?? '100', 'Price per call in integer minor units (100 = 1.00 USD)', yes),
    category: await valueOf('category', opts.category, d.category ?? 'general', 'Category (searched by exact match)', yes),
    description: await valueOf('description', opts.description, d.description ?? template.description, 'Description (what buyers search and read)', yes),
    agentpayDependency: checked('agentpayDependency', opts.agentpayDependency ?? env[DEPENDENCY_ENV] ?? defaultDependency()),
  };

  checkTarget(dir, Boolean(opts.force)); // again: prompts take time
  const files = renderTemplate(template, dir, values);
  const rel = relative(cwd, dir);
  const nextSteps = [
    ...(rel ? [`cd ${/\s/.test(rel) ? JSON.stringify(rel) : rel}`] : []),
    'npm install',
    'npm test',
    'npm run e2e',
  ];
  return { template: template.name, dir, values, files, nextSteps };
}

export function initText(r: InitResult): string {
  const width = Math.max(...r.nextSteps.map((s) => s.length));
  const why: Record<string, string> = {
    'npm test': 'unit tests, no gateway needed',
    'npm run e2e': 'one real purchase against a local sandbox gateway',
  };
  return [
    `Created ${r.values.name} from the ${r.template} template in ${r.dir} (${r.files.length} files):`,
    `  sells for ${r.values.priceMinor} minor units per call in category "${r.values.category}"`,
    '',
    'Next:',
    ...r.nextSteps.map((s) => (why[s] ? `  ${s.padEnd(width)}   # ${why[s]}` : `  ${s}`)),
    '',
    'README.md explains publishing the capability and going live.',
  ].join('\n');
}
