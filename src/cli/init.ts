/**
 * `agentpay init`: a new seller project from a template under templates/<name>/.
 *
 * The template convention (shared by every template; keep it exactly):
 * - templates/<name>/template.json describes it, `{"description": "...", "defaults": {...}}`, and is
 *   not copied;
 * - every other file is copied with `{{name}}`, `{{priceMinor}}`, `{{category}}`, `{{description}}`,
 *   `{{sdkDependency}}` and `{{cliDependency}}` replaced (the npm specs of agentpay-sdk and
 *   agentpay-cli in package.json); other `{{...}}` text is left alone;
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
import { createRequire } from 'node:module';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import { MAX_MINOR } from '../core/money.js';
import { packageRoot } from '../paths.js';
import { CliError, usageError } from './errors/index.js';
import { askChoice, askText, canPrompt } from './prompts.js';

export const PLACEHOLDERS = ['name', 'priceMinor', 'category', 'description', 'sdkDependency', 'cliDependency'] as const;
export type Placeholder = (typeof PLACEHOLDERS)[number];
export type TemplateValues = Record<Placeholder, string>;
type DependencyField = 'sdkDependency' | 'cliDependency';

/** Fields a template's defaults may set (the dependencies are the CLI's to decide). */
type Defaults = Partial<Record<Exclude<Placeholder, DependencyField>, string>>;

export interface TemplateInfo {
  name: string;
  dir: string;
  description: string;
  defaults: Defaults;
}

/** Env of `--local PATH`: a checkout of agentpay the new project links instead of registry versions. */
export const LOCAL_ENV = 'AGENTPAY_INIT_LOCAL';
/** Envs of the hidden `--sdk-dependency`/`--cli-dependency`: an exact npm spec, e.g. `file:/tmp/agentpay-sdk-0.1.0.tgz`. */
export const SDK_DEPENDENCY_ENV = 'AGENTPAY_INIT_SDK_DEPENDENCY';
export const CLI_DEPENDENCY_ENV = 'AGENTPAY_INIT_CLI_DEPENDENCY';
/** The package names the new project depends on. */
export const SDK_PACKAGE = 'agentpay-sdk';
export const CLI_PACKAGE = 'agentpay-cli';

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
  sdkDependency: (v) => line(v, 1000),
  cliDependency: (v) => line(v, 1000),
};

const FLAG_OF: Record<Placeholder, string> = {
  name: '--name',
  priceMinor: '--price',
  category: '--category',
  description: '--description',
  sdkDependency: '--sdk-dependency',
  cliDependency: '--cli-dependency',
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
  /** a checkout of agentpay to link (`file:`) instead of registry version ranges */
  local?: string | undefined;
  /** registry version ranges even when run from a checkout */
  registry?: boolean;
  /** exact npm specs, winning over everything else (e.g. packed tarballs) */
  sdkDependency?: string | undefined;
  cliDependency?: string | undefined;
  force?: boolean;
  /** take defaults for what was not given, never prompt */
  yes?: boolean;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** Where the new project's agentpay-sdk and agentpay-cli come from. */
export interface DependencySource {
  /** `registry`: version ranges; `local`: `file:` links to `checkout`; `given`: specs from --sdk-dependency/--cli-dependency */
  kind: 'registry' | 'local' | 'given';
  checkout?: string;
  /** why this kind, in a few words */
  because: string;
}

export interface InitResult {
  template: string;
  dir: string;
  values: TemplateValues;
  dependencies: DependencySource;
  files: string[];
  nextSteps: string[];
}

function versionOf(packageJson: string): string {
  return (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
}

/** The version of agentpay-sdk this CLI runs with (its own dependency, hoisted or nested). */
function sdkVersion(root: string): string {
  return versionOf(createRequire(join(root, 'package.json')).resolve(`${SDK_PACKAGE}/package.json`));
}

/** Is this root an installed package (under node_modules/) rather than a checkout? */
export const isInstalled = (root: string): boolean => root.split(/[\\/]/).includes('node_modules');

/** Registry ranges of the two packages: `^` their versions (those this CLI runs with). */
export function registryDependencies(root: string = packageRoot()): Pick<TemplateValues, DependencyField> {
  return { sdkDependency: `^${sdkVersion(root)}`, cliDependency: `^${versionOf(join(root, 'package.json'))}` };
}

/** `file:` links to a checkout of agentpay (its root: the CLI; packages/sdk: the SDK), refused unless it is one. */
export function localDependencies(checkout: string, flag = '--local'): Pick<TemplateValues, DependencyField> {
  const nameAt = (p: string): string | undefined => {
    try {
      return (JSON.parse(readFileSync(join(p, 'package.json'), 'utf8')) as { name?: string }).name;
    } catch {
      return undefined;
    }
  };
  const sdkDir = join(checkout, 'packages', 'sdk');
  if (nameAt(checkout) !== CLI_PACKAGE || nameAt(sdkDir) !== SDK_PACKAGE) {
    throw new CliError('VALIDATION_FAILED', `${flag}: ${checkout} is not a checkout of agentpay (no package.json named ${CLI_PACKAGE} with packages/sdk/package.json named ${SDK_PACKAGE})`, {
      tryNext: 'give the root of a clone of the agentpay repository, or leave --local out to depend on the published packages',
      details: { flag, path: checkout },
    });
  }
  return { sdkDependency: `file:${sdkDir}`, cliDependency: `file:${checkout}` };
}

/**
 * Where the new project's agentpay-sdk and agentpay-cli come from, first match wins:
 * 1. --sdk-dependency/--cli-dependency (hidden; or their envs): exact specs, e.g. packed tarballs;
 * 2. --local PATH (or AGENTPAY_INIT_LOCAL=PATH): `file:` links to that checkout;
 * 3. --registry: version ranges;
 * 4. run from an installed agentpay-cli (under node_modules/): version ranges `^x.y.z` of the
 *    versions this CLI runs with; run from a checkout (a clone, `npx agentpay init` inside it):
 *    `file:` links to that checkout, whose version may not be published and whose changes are
 *    what its developer wants to try.
 */
export function chooseDependencies(
  opts: Pick<InitOptions, 'local' | 'registry' | 'sdkDependency' | 'cliDependency' | 'cwd'>,
  env: NodeJS.ProcessEnv,
  root: string = packageRoot(),
): { values: Pick<TemplateValues, DependencyField>; source: DependencySource } {
  const cwd = opts.cwd ?? process.cwd();
  const localFlag = opts.local !== undefined ? '--local' : LOCAL_ENV;
  const localPath = opts.local ?? (opts.registry ? undefined : env[LOCAL_ENV] || undefined);
  let values: Pick<TemplateValues, DependencyField>;
  let source: DependencySource;
  if (localPath !== undefined) {
    const checkout = resolve(cwd, localPath);
    values = localDependencies(checkout, localFlag);
    source = { kind: 'local', checkout, because: `${localFlag} ${checkout}` };
  } else if (opts.registry || isInstalled(root)) {
    values = registryDependencies(root);
    source = { kind: 'registry', because: opts.registry ? '--registry' : 'agentpay-cli runs from an installed package' };
  } else {
    values = localDependencies(root);
    source = { kind: 'local', checkout: root, because: 'agentpay runs from this checkout (--registry for version ranges)' };
  }
  const sdkGiven = opts.sdkDependency ?? env[SDK_DEPENDENCY_ENV] ?? undefined;
  const cliGiven = opts.cliDependency ?? env[CLI_DEPENDENCY_ENV] ?? undefined;
  if (sdkGiven !== undefined || cliGiven !== undefined) {
    values = { sdkDependency: sdkGiven ?? values.sdkDependency, cliDependency: cliGiven ?? values.cliDependency };
    source = { kind: 'given', because: '--sdk-dependency/--cli-dependency' };
  }
  return { values: { sdkDependency: checked('sdkDependency', values.sdkDependency), cliDependency: checked('cliDependency', values.cliDependency) }, source };
}

/** A value from its flag, else the default (with --yes), else a prompt on a terminal, else a usage error. */
async function valueOf(field: Exclude<Placeholder, DependencyField>, given: string | undefined, fallback: string, message: string, yes: boolean): Promise<string> {
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
  const deps = chooseDependencies(opts, env); // refuses a bad --local before any question

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
    ...deps.values,
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
  return { template: template.name, dir, values, dependencies: deps.source, files, nextSteps };
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
    `  depends on ${SDK_PACKAGE} ${r.values.sdkDependency} and ${CLI_PACKAGE} ${r.values.cliDependency} (${r.dependencies.because})`,
    '',
    'Next:',
    ...r.nextSteps.map((s) => (why[s] ? `  ${s.padEnd(width)}   # ${why[s]}` : `  ${s}`)),
    '',
    'README.md explains publishing the capability and going live.',
  ].join('\n');
}
