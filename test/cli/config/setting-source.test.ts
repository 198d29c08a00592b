/**
 * A bad configuration value is reported where it came from: an environment variable by its
 * name, a config file by its path and key, a saved profile by its name and config file; never
 * as a command-line flag nobody typed. Each says what to do there. A typed flag is still named as
 * the flag. Runs the built binary; nothing here reaches a gateway or starts one.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cli, json, removeTempDirs, tempDir, type CliResult } from '../helpers.js';

afterAll(removeTempDirs);

const errorOf = (r: CliResult) => json<{ error: { code: string; message: string; details: Record<string, unknown> } }>(r).error;
/** the "Try:" line of a human error */
const tryLine = (r: CliResult) => r.stderr.split('\n').find((l) => l.startsWith('Try: ')) ?? '';

describe('the gateway a command talks to', () => {
  const configDir = tempDir();
  const run = (args: string[], env: Record<string, string>, dir = configDir) => cli(args, { configDir: dir, env });

  it('names AGENTPAY_GATEWAY_URL when it is not a URL or not http(s), and says to set or unset it', async () => {
    const [bad, human, ftp] = await Promise.all([
      run(['whoami', '--json'], { AGENTPAY_GATEWAY_URL: 'not-a-url', AGENTPAY_API_KEY: 'ap_w_x' }),
      run(['whoami'], { AGENTPAY_GATEWAY_URL: 'not-a-url', AGENTPAY_API_KEY: 'ap_w_x' }),
      run(['whoami', '--json'], { AGENTPAY_GATEWAY_URL: 'ftp://127.0.0.1', AGENTPAY_API_KEY: 'ap_w_x' }),
    ]);
    expect(bad.exitCode).toBe(2);
    expect(errorOf(bad)).toEqual({ code: 'USAGE', message: 'the gateway URL "not-a-url" from AGENTPAY_GATEWAY_URL is not a URL', details: { env: 'AGENTPAY_GATEWAY_URL' } });
    expect(tryLine(human)).toBe('Try: set AGENTPAY_GATEWAY_URL to a gateway URL such as https://127.0.0.1:4402, or unset it (unset AGENTPAY_GATEWAY_URL)');
    expect(human.stderr).not.toContain('--gateway-url');
    expect(errorOf(ftp).message).toBe('the gateway URL "ftp://127.0.0.1" from AGENTPAY_GATEWAY_URL must start with https://');
  });

  it('names the profile and its config file when a saved baseUrl or ca is bad', async () => {
    const dir = tempDir();
    const path = join(dir, 'config.json');
    writeFileSync(path, JSON.stringify({ current: 'prod', profiles: { prod: { baseUrl: 'not-a-url', apiKey: 'ap_w_x' } } }));
    const r = await run(['whoami', '--json'], {}, dir);
    expect(r.exitCode).toBe(2);
    expect(errorOf(r)).toEqual({
      code: 'USAGE',
      message: `the gateway URL "not-a-url" from "baseUrl" of profile "prod" in ${path} is not a URL`,
      details: { profile: 'prod', path, field: 'baseUrl' },
    });
    expect(tryLine(await run(['whoami'], {}, dir))).toBe(`Try: correct it in ${path}, or save the profile again: agentpay login --profile prod --gateway-url URL --api-key KEY`);

    writeFileSync(path, JSON.stringify({ current: 'prod', profiles: { prod: { baseUrl: 'https://127.0.0.1:9', apiKey: 'ap_w_x', ca: '/no/such/ca.pem' } } }));
    const ca = await run(['whoami', '--json'], {}, dir);
    expect(ca.exitCode).toBe(3);
    expect(errorOf(ca)).toEqual({
      code: 'CA_NOT_FOUND',
      message: `the CA certificate /no/such/ca.pem (from "ca" of profile "prod" in ${path}) does not exist`,
      details: { profile: 'prod', path, field: 'ca' },
    });
  });

  it('names AGENTPAY_CA when the certificate it names does not exist', async () => {
    const env = { AGENTPAY_GATEWAY_URL: 'https://127.0.0.1:9', AGENTPAY_API_KEY: 'ap_w_x', AGENTPAY_CA: '/no/such/ca.pem' };
    const [r, human] = await Promise.all([run(['whoami', '--json'], env), run(['whoami'], env)]);
    expect(r.exitCode).toBe(3);
    expect(errorOf(r)).toEqual({ code: 'CA_NOT_FOUND', message: 'the CA certificate /no/such/ca.pem (from AGENTPAY_CA) does not exist', details: { env: 'AGENTPAY_CA' } });
    expect(tryLine(human)).toContain('set AGENTPAY_CA to');
    expect(human.stderr).not.toContain('--ca');
  });

  it('still names a typed --gateway-url or --ca as the flag', async () => {
    const [url, ca] = await Promise.all([
      run(['whoami', '--json', '--gateway-url', 'nope', '--api-key', 'ap_w_x'], { AGENTPAY_GATEWAY_URL: 'https://127.0.0.1:9' }),
      run(['whoami', '--json', '--gateway-url', 'https://127.0.0.1:9', '--api-key', 'ap_w_x', '--ca', '/no/such/ca.pem'], {}),
    ]);
    expect(errorOf(url)).toEqual({ code: 'USAGE', message: 'the gateway URL "nope" from --gateway-url is not a URL', details: { flag: '--gateway-url' } });
    expect(errorOf(ca)).toEqual({ code: 'CA_NOT_FOUND', message: 'the CA certificate /no/such/ca.pem does not exist', details: {} });
  });
});

describe('agentpay gateway start settings from the environment or the config file', () => {
  const configDir = tempDir();
  /** gateway start in a fresh directory; returns the result and whether a data dir was made */
  async function start(env: Record<string, string>, args: string[] = []): Promise<CliResult & { made: boolean }> {
    const cwd = tempDir();
    // free ports should a setting be accepted after all; a test's own variables override them
    const r = await cli(['gateway', 'start', '--json', ...args], { configDir, cwd, env: { AGENTPAY_PORT: '0', AGENTPAY_HTTP_PORT: '0', ...env } });
    return { ...r, made: existsSync(join(cwd, '.agentpay')) };
  }
  function file(content: unknown): string {
    const path = join(tempDir(), 'agentpay.json');
    writeFileSync(path, JSON.stringify(content));
    return path;
  }

  it("names the variable when oclif refuses a variable's value (AGENTPAY_HTTP_PORT, AGENTPAY_MODE, AGENTPAY_FEE_BPS), exit 2, nothing made", async () => {
    const [port, mode, fee] = await Promise.all([
      start({ AGENTPAY_HTTP_PORT: 'abc' }),
      start({ AGENTPAY_MODE: 'dev' }),
      start({ AGENTPAY_FEE_BPS: '20000' }),
    ]);
    for (const r of [port, mode, fee]) {
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.made).toBe(false);
    }
    expect(errorOf(port)).toEqual({
      code: 'USAGE',
      message: 'the environment variable AGENTPAY_HTTP_PORT (read for --http-port): expected an integer but received: abc',
      details: { flag: '--http-port', env: 'AGENTPAY_HTTP_PORT' },
    });
    expect(errorOf(mode)).toEqual({
      code: 'USAGE',
      message: 'the environment variable AGENTPAY_MODE (read for --mode) must be one of: sandbox, production, got "dev"',
      details: { flag: '--mode', env: 'AGENTPAY_MODE' },
    });
    expect(errorOf(fee).message).toBe('the environment variable AGENTPAY_FEE_BPS (read for --fee-bps): expected an integer less than or equal to 10000 but received: 20000');
  });

  it('says what to do with the variable, and still names a typed flag as the flag', async () => {
    const cwd = tempDir();
    const [human, typed] = await Promise.all([
      cli(['gateway', 'start', '--port', '0'], { configDir, cwd, env: { AGENTPAY_HTTP_PORT: 'abc' } }),
      cli(['gateway', 'start', '--port', 'abc', '--json'], { configDir, cwd, env: { AGENTPAY_PORT: '0' } }),
    ]);
    expect(tryLine(human)).toBe('Try: correct AGENTPAY_HTTP_PORT, or unset it (unset AGENTPAY_HTTP_PORT); a --http-port typed on the command line overrides it');
    expect(errorOf(typed)).toEqual({ code: 'USAGE', message: '--port: expected an integer but received: abc', details: { flag: '--port' } });
  });

  it('names AGENTPAY_LOG_LEVEL, or the file and its key, for a log level it does not know', async () => {
    const path = file({ logLevel: 'loud' });
    const [env, fromFile] = await Promise.all([start({ AGENTPAY_LOG_LEVEL: 'loud' }), start({}, ['--config', path])]);
    expect(errorOf(env)).toEqual({
      code: 'USAGE',
      message: 'AGENTPAY_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      details: { flag: '--log-level', env: 'AGENTPAY_LOG_LEVEL' },
    });
    expect(errorOf(fromFile)).toEqual({
      code: 'USAGE',
      message: `"logLevel" in ${path} must be one of fatal, error, warn, info, debug, trace, silent, got "loud"`,
      details: { flag: '--log-level', file: path, field: 'logLevel' },
    });
    expect(env.made || fromFile.made).toBe(false);
  });

  it('names where the sandbox rails, plain HTTP and echoed tokens were asked for in production mode', async () => {
    const railsFile = file({ rails: 'sandbox' });
    const tlsFile = file({ tls: false });
    const [rails, railsInFile, tls, tlsInFile, echo] = await Promise.all([
      start({ AGENTPAY_RAILS: 'sandbox', AGENTPAY_MODE: 'production' }),
      start({}, ['--config', railsFile]),
      start({ AGENTPAY_TLS: '0' }),
      start({}, ['--config', tlsFile]),
      start({ AGENTPAY_DEV_ECHO_TOKENS: 'yes' }),
    ]);
    expect(errorOf(rails).message).toBe('the sandbox rails (simulated processor, chain and bank) run only in sandbox mode, but AGENTPAY_RAILS=sandbox asks for them and the mode is production (AGENTPAY_MODE=production)');
    expect(errorOf(railsInFile).message).toBe(`the sandbox rails (simulated processor, chain and bank) run only in sandbox mode, but "rails": "sandbox" in ${railsFile} asks for them and the mode is production (the default)`);
    expect(errorOf(tls)).toEqual({
      code: 'USAGE',
      message: 'AGENTPAY_TLS=0 serves plain HTTP and is only for running behind a TLS-terminating proxy; add AGENTPAY_TRUST_PROXY=true (or --trust-proxy)',
      details: { flag: '--tls', env: 'AGENTPAY_TLS' },
    });
    expect(errorOf(tlsInFile).message).toBe(`"tls": false in ${tlsFile} serves plain HTTP and is only for running behind a TLS-terminating proxy; add "trustProxy": true to ${tlsFile} (or --trust-proxy)`);
    expect(errorOf(echo)).toEqual({
      code: 'USAGE',
      message: 'AGENTPAY_DEV_ECHO_TOKENS=yes is refused in production mode (the default): it would put signup and password-reset tokens in API responses',
      details: { flag: '--dev-echo-tokens', env: 'AGENTPAY_DEV_ECHO_TOKENS' },
    });
    for (const r of [rails, railsInFile, tls, tlsInFile, echo]) expect(r.exitCode, r.stderr).toBe(2);
  });

  it('names AGENTPAY_DATA_DIR when it is blank and AGENTPAY_GATEWAY_CONFIG when its file is missing', async () => {
    const [blank, missing] = await Promise.all([start({ AGENTPAY_DATA_DIR: ' ' }), start({ AGENTPAY_GATEWAY_CONFIG: '/no/such/agentpay.json' })]);
    expect(errorOf(blank)).toMatchObject({ code: 'USAGE', details: { flag: '--data-dir', env: 'AGENTPAY_DATA_DIR' } });
    expect(errorOf(blank).message).toMatch(/^the environment variable AGENTPAY_DATA_DIR \(read for --data-dir\) must not be blank/);
    expect(errorOf(missing)).toEqual({
      code: 'USAGE',
      message: 'AGENTPAY_GATEWAY_CONFIG: the config file /no/such/agentpay.json does not exist',
      details: { flag: '--config', env: 'AGENTPAY_GATEWAY_CONFIG' },
    });
    expect(blank.made || missing.made).toBe(false);
  });

  it('names AGENTPAY_HOST, or the file and its key, for a host this machine does not have', async () => {
    const path = file({ host: '10.255.255.1' });
    const [env, fromFile] = await Promise.all([start({ AGENTPAY_HOST: '10.255.255.1' }, ['--data-dir', join(tempDir(), 'gw')]), start({}, ['--config', path, '--data-dir', join(tempDir(), 'gw')])]);
    expect(errorOf(env)).toMatchObject({
      code: 'USAGE',
      message: 'AGENTPAY_HOST=10.255.255.1 is not an address of this machine, so the gateway cannot listen on it',
      details: { flag: '--host', env: 'AGENTPAY_HOST', host: '10.255.255.1' },
    });
    expect(errorOf(fromFile)).toMatchObject({
      code: 'USAGE',
      message: `"host": "10.255.255.1" in ${path} is not an address of this machine, so the gateway cannot listen on it`,
      details: { flag: '--host', file: path, field: 'host' },
    });
  });
});
