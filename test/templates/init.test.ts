/**
 * `agentpay init` as people and scripts run it (the built binary, no terminal): it renders a
 * template from flags alone, refuses a non-empty directory without writing anything, and names
 * what is missing or wrong.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseDependencies, initText, listTemplates, PLACEHOLDERS, renderText, type InitResult } from '../../src/cli/init.js';
import { cli, json, removeTempDirs, tempDir } from '../cli/helpers.js';
import { packageRoot } from '../../src/paths.js';

afterAll(removeTempDirs);

/** run from this checkout (not from node_modules/), init links the checkout itself */
const checkout = { sdkDependency: `file:${packageRoot()}/packages/sdk`, cliDependency: `file:${packageRoot()}` };
const version = (p: string): string => (JSON.parse(readFileSync(join(packageRoot(), p), 'utf8')) as { version: string }).version;
const leftoverPlaceholder = new RegExp(`\\{\\{(${PLACEHOLDERS.join('|')})\\}\\}`);

function listTree(dir: string, sub = ''): string[] {
  return readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((e) => {
    const rel = sub ? `${sub}/${e.name}` : e.name;
    return e.isDirectory() ? listTree(dir, rel) : [rel];
  }).sort();
}

describe('agentpay init into a directory that is not empty', () => {
  it('refuses with exit 1 and DIRECTORY_NOT_EMPTY, names --force, and writes nothing', async () => {
    const cwd = tempDir('agentpay-init-');
    const target = join(cwd, 'existing');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'mine');

    const r = await cli(['init', 'existing', '--template', 'rest', '--yes'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error DIRECTORY_NOT_EMPTY:');
    expect(r.stderr).toContain('notes.txt');
    expect(r.stderr).toContain('--force');
    expect(listTree(target)).toEqual(['notes.txt']);
    expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('mine');

    const asJson = await cli(['init', 'existing', '--template', 'rest', '--yes', '--json'], { configDir: cwd, cwd });
    expect(asJson.exitCode).toBe(1);
    expect(json(asJson).error).toMatchObject({ code: 'DIRECTORY_NOT_EMPTY' });
    expect(listTree(target)).toEqual(['notes.txt']);
  });

  it('writes into it with --force, keeping files the template does not have', async () => {
    const cwd = tempDir('agentpay-init-');
    const target = join(cwd, 'existing');
    mkdirSync(target);
    writeFileSync(join(target, 'notes.txt'), 'mine');

    const r = await cli(['init', 'existing', '--template', 'rest', '--yes', '--force'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(0);
    expect(readFileSync(join(target, 'notes.txt'), 'utf8')).toBe('mine');
    expect(existsSync(join(target, 'package.json'))).toBe(true);
  });

  it('treats a directory holding only .git as empty', async () => {
    const cwd = tempDir('agentpay-init-');
    mkdirSync(join(cwd, 'repo', '.git'), { recursive: true });
    const r = await cli(['init', 'repo', '--template', 'rest', '--yes'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(0);
    expect(existsSync(join(cwd, 'repo', 'package.json'))).toBe(true);
  });

  it('refuses a path that is a file', async () => {
    const cwd = tempDir('agentpay-init-');
    writeFileSync(join(cwd, 'taken'), 'x');
    const r = await cli(['init', 'taken', '--template', 'rest', '--yes'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error NOT_A_DIRECTORY:');
    expect(readFileSync(join(cwd, 'taken'), 'utf8')).toBe('x');
  });
});

describe('agentpay init with flags, without a terminal', () => {
  it('renders the rest template with every value from flags, escaped for the file it lands in', async () => {
    const cwd = tempDir('agentpay-init-');
    const description = `Forecasts by city: it's "sunny" \\ maybe \`today\` for $5`;
    const r = await cli(['init', 'weather-api', '--template', 'rest', '--name', 'weather-api', '--price', '25', '--category', 'weather', '--description', description], { configDir: cwd, cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json<InitResult>(r);
    const dir = join(cwd, 'weather-api');
    expect(out).toMatchObject({
      template: 'rest',
      dir,
      values: { name: 'weather-api', priceMinor: '25', category: 'weather', description, ...checkout },
      dependencies: { kind: 'local', checkout: packageRoot() },
      nextSteps: ['cd weather-api', 'npm install', 'npm test', 'npm run e2e'],
    });

    // every template file but template.json, _gitignore renamed
    const files = listTree(dir);
    expect(files).toEqual([...out.files].sort());
    expect(files).toContain('.gitignore');
    expect(files).not.toContain('_gitignore');
    expect(files).not.toContain('template.json');
    for (const f of ['README.md', 'package.json', 'scripts/ci.sh', 'scripts/e2e.mjs']) expect(files).toContain(f);
    for (const f of files) expect(readFileSync(join(dir, f), 'utf8'), f).not.toMatch(leftoverPlaceholder);
    expect(statSync(join(dir, 'scripts/ci.sh')).mode & 0o111).not.toBe(0);

    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    expect(pkg).toMatchObject({ name: 'weather-api', description, dependencies: { 'agentpay-sdk': checkout.sdkDependency }, devDependencies: { 'agentpay-cli': checkout.cliDependency } });
    expect(r.stderr).toBe('');
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(['test', 'e2e']));
    // the code carries the exact values: quotes, backslash, backtick and $ did not break it
    const { capability } = await import(pathToFileURL(join(dir, 'src/capability.js')).href);
    expect(capability).toMatchObject({ name: 'weather-api', description, category: 'weather', priceMinor: '25', protocol: 'rest' });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(description);
  });

  it('takes the defaults with --yes: the name from the directory, the packages from --sdk-dependency/--cli-dependency', async () => {
    const cwd = tempDir('agentpay-init-');
    const r = await cli(['init', 'sub/my-seller', '--yes', '--sdk-dependency', 'file:/somewhere/sdk.tgz', '--cli-dependency', 'file:/somewhere/cli.tgz'], { configDir: cwd, cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const out = json<InitResult>(r);
    const rest = listTemplates().find((t) => t.name === 'rest')!;
    expect(out.template).toBe('rest');
    expect(out.values).toEqual({ name: 'my-seller', ...withoutName(rest.defaults), sdkDependency: 'file:/somewhere/sdk.tgz', cliDependency: 'file:/somewhere/cli.tgz' });
    const pkg = JSON.parse(readFileSync(join(cwd, 'sub/my-seller/package.json'), 'utf8'));
    expect(pkg.dependencies['agentpay-sdk']).toBe('file:/somewhere/sdk.tgz');
    expect(pkg.devDependencies['agentpay-cli']).toBe('file:/somewhere/cli.tgz');
  });

  it('writes registry version ranges with --registry, even from a checkout', async () => {
    const cwd = tempDir('agentpay-init-');
    const r = await cli(['init', 'ranged', '--yes', '--registry'], { configDir: cwd, cwd });
    expect(r.exitCode, r.stderr).toBe(0);
    const pkg = JSON.parse(readFileSync(join(cwd, 'ranged/package.json'), 'utf8'));
    expect(pkg.dependencies['agentpay-sdk']).toBe(`^${version('packages/sdk/package.json')}`);
    expect(pkg.devDependencies['agentpay-cli']).toBe(`^${version('package.json')}`);
    expect(json<InitResult>(r).dependencies).toMatchObject({ kind: 'registry', because: '--registry' });
  });

  it('links the checkout given by --local PATH or AGENTPAY_INIT_LOCAL, and refuses a PATH that is not one', async () => {
    const cwd = tempDir('agentpay-init-');
    const byFlag = await cli(['init', 'a', '--yes', '--local', packageRoot()], { configDir: cwd, cwd });
    expect(byFlag.exitCode, byFlag.stderr).toBe(0);
    expect(json<InitResult>(byFlag).values).toMatchObject(checkout);
    const byEnv = await cli(['init', 'b', '--yes'], { configDir: cwd, cwd, env: { AGENTPAY_INIT_LOCAL: packageRoot() } });
    expect(json<InitResult>(byEnv).dependencies).toMatchObject({ kind: 'local', because: `AGENTPAY_INIT_LOCAL ${packageRoot()}` });

    const wrong = await cli(['init', 'c', '--yes', '--local', cwd], { configDir: cwd, cwd });
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain(`error VALIDATION_FAILED: --local: ${cwd} is not a checkout of agentpay`);
    expect(existsSync(join(cwd, 'c'))).toBe(false);

    const both = await cli(['init', 'd', '--yes', '--local', packageRoot(), '--registry'], { configDir: cwd, cwd });
    expect(both.exitCode).toBe(2);
  });

  it('names the missing flag (exit 2) instead of prompting, and writes nothing', async () => {
    const cwd = tempDir('agentpay-init-');
    // the name defaults to the directory's (docs/cli.md); the next flag with no default is named
    const r = await cli(['init', 'new-seller', '--template', 'rest', '--price', '10'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error USAGE: --category is required (there is no terminal to ask on)');
    expect(existsSync(join(cwd, 'new-seller'))).toBe(false);

    const noDir = await cli(['init', '--template', 'rest'], { configDir: cwd, cwd });
    expect(noDir.exitCode).toBe(2);
    expect(noDir.stderr).toContain('DIR is required');

    const noTemplate = await cli(['init', 'new-seller'], { configDir: cwd, cwd });
    expect(noTemplate.exitCode).toBe(2);
    expect(noTemplate.stderr).toContain('--template is required');
    expect(readdirSync(cwd)).toEqual([]);
  });

  it.each([
    [['--price', '1.50'], '--price', '"1.50" is written 150'],
    [['--price', '0'], '--price', 'greater than zero'],
    [['--name', 'Weather API'], '--name', 'npm package name'],
    [['--category', ' '], '--category', 'must not be empty'],
  ])('refuses %j with exit 1, naming %s, and writes nothing', async (flags, flag, why) => {
    const cwd = tempDir('agentpay-init-');
    const r = await cli(['init', 'x', '--template', 'rest', '--yes', ...flags], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`error VALIDATION_FAILED: ${flag}:`);
    expect(r.stderr).toContain(why);
    expect(existsSync(join(cwd, 'x'))).toBe(false);
  });

  it('refuses an unknown template with exit 2, listing the ones there are', async () => {
    const cwd = tempDir('agentpay-init-');
    const r = await cli(['init', 'x', '--template', 'graphql', '--yes'], { configDir: cwd, cwd });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('there is no template "graphql"; choose one of');
    expect(r.stderr).toContain('rest');
  });
});

function withoutName(d: Record<string, string | undefined>): Record<string, string | undefined> {
  const { name: _name, ...rest } = d;
  return rest;
}

describe('renderText', () => {
  const values = { name: 'n', priceMinor: '5', category: 'c', description: `a "b" 'c' \`d\` $e \\f`, sdkDependency: '^1.0.0', cliDependency: '^1.0.0' };

  it('escapes values for JSON in .json files and for any string literal in code files, leaves other text raw', () => {
    expect(JSON.parse(renderText('{"d": "{{description}}"}', 'package.json', values))).toEqual({ d: values.description });
    for (const quote of ['"', "'", '`']) {
      const code = renderText(`export default ${quote}{{description}}${quote};`, 'x.mjs', values);
      expect(new Function(code.replace('export default', 'return'))()).toBe(values.description);
    }
    expect(renderText('# {{name}}: {{description}}', 'README.md', values)).toBe(`# n: ${values.description}`);
  });

  it('leaves placeholders it does not know alone', () => {
    expect(renderText('{{name}} {{other}}', 'README.md', values)).toBe('n {{other}}');
  });
});

describe('initText', () => {
  it('says what was made and the next steps', () => {
    const text = initText({ template: 'rest', dir: '/tmp/w', values: { name: 'w', priceMinor: '25', category: 'weather', description: 'd', sdkDependency: '^1.2.0', cliDependency: '^1.3.0' }, dependencies: { kind: 'registry', because: 'agentpay-cli runs from an installed package' }, files: ['a', 'b'], nextSteps: ['cd w', 'npm install', 'npm test', 'npm run e2e'] });
    expect(text).toContain('Created w from the rest template in /tmp/w (2 files)');
    expect(text).toContain('depends on agentpay-sdk ^1.2.0 and agentpay-cli ^1.3.0 (agentpay-cli runs from an installed package)');
    expect(text).toMatch(/cd w\n {2}npm install\n {2}npm test +# unit tests/);
    expect(text).toContain('npm run e2e');
  });
});

describe('the agentpay dependencies init writes', () => {
  it('are ^version ranges from an installed agentpay-cli, file: links from a checkout', () => {
    // an installed CLI: node_modules/agentpay-cli with its agentpay-sdk beside it
    const installed = join(tempDir('agentpay-init-deps-'), 'node_modules');
    for (const [name, v] of [['agentpay-cli', '3.4.5'], ['agentpay-sdk', '1.2.3']] as const) {
      mkdirSync(join(installed, name), { recursive: true });
      writeFileSync(join(installed, name, 'package.json'), JSON.stringify({ name, version: v }));
    }
    expect(chooseDependencies({}, {}, join(installed, 'agentpay-cli')).values).toEqual({ sdkDependency: '^1.2.3', cliDependency: '^3.4.5' });
    // AGENTPAY_INIT_LOCAL links a checkout even from an installed CLI; --registry wins over it
    expect(chooseDependencies({}, { AGENTPAY_INIT_LOCAL: packageRoot() }, join(installed, 'agentpay-cli')).values).toEqual(checkout);
    expect(chooseDependencies({ registry: true }, { AGENTPAY_INIT_LOCAL: packageRoot() }, join(installed, 'agentpay-cli')).values).toEqual({ sdkDependency: '^1.2.3', cliDependency: '^3.4.5' });
    // this checkout
    expect(chooseDependencies({}, {}).values).toEqual(checkout);
    expect(chooseDependencies({}, {}).source).toMatchObject({ kind: 'local', checkout: packageRoot() });
  });
});
