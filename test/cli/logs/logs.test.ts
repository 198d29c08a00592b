/**
 * The gateway's request log as people and scripts see it: one JSON line per request on a
 * piped stderr (pino), readable lines with --log-format pretty, DATA_DIR/logs/requests.jsonl
 * rotated by size, and `agentpay logs tail` following a real `agentpay dev`'s traffic with
 * its filters.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayStartOptions } from '../../../src/cli/gateway-config.js';
import { followRequestLog } from '../../../src/cli/logs.js';
import { RequestLogFile, requestLogPath, rotatedLogPath, type RequestLogEntry } from '../../../src/gateway/request-log.js';
import { BIN, cli, json, removeTempDirs, startGatewayProcess, tempDir, type GatewayProcess } from '../helpers.js';
import { until } from '../../helpers/wait.js';

const configDir = tempDir();

/** One HTTPS request to a gateway of `dataDir`; resolves to its status. */
function request(baseUrl: string, dataDir: string, path: string, opts: { method?: string; key?: string } = {}): Promise<number> {
  const ca = readFileSync(join(dataDir, 'tls', 'ca.pem'));
  return new Promise((res, rej) => {
    const req = https.request(`${baseUrl}${path}`, { method: opts.method ?? 'GET', ca, headers: opts.key ? { 'x-api-key': opts.key } : {} }, (r) => {
      r.resume();
      r.on('end', () => res(r.statusCode!));
    });
    req.on('error', rej);
    req.end();
  });
}

const devArgs = (dataDir: string, ...more: string[]) => ['dev', '--json', '--port', '0', '--http-port', '0', '--data-dir', dataDir, ...more];

afterAll(removeTempDirs);

describe('the log of agentpay dev', () => {
  it('is one pino JSON line per request when stderr is piped, with time, method, path, status, latency, key id and error code', async () => {
    const dataDir = join(tempDir(), 'data');
    const dev = await startGatewayProcess(devArgs(dataDir), { configDir });
    const key = dev.ready.workspace!.apiKey;
    expect(await request(dev.ready.baseUrl, dataDir, '/v1/wallets', { key })).toBe(200);
    expect(await request(dev.ready.baseUrl, dataDir, '/v1/nope?api_key=ap_w_secret')).toBe(404);
    const { stderr } = await dev.stop();
    const lines = stderr.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const requests = lines.filter((l) => l.msg === 'request');
    expect(requests).toHaveLength(2);
    // fastify's own two lines per request are gone
    expect(lines.filter((l) => l.msg === 'incoming request' || l.msg === 'request completed')).toEqual([]);
    const [ok, missing] = requests;
    expect(ok).toMatchObject({ level: 30, method: 'GET', url: '/v1/wallets', status: 200, keyId: expect.stringMatching(/^key_/), reqId: expect.stringMatching(/^req_/) });
    expect(typeof ok!.time).toBe('number');
    expect(typeof ok!.ms).toBe('number');
    expect(ok!.code).toBeUndefined();
    expect(missing).toMatchObject({ method: 'GET', url: '/v1/nope?api_key=[redacted]', status: 404, code: 'NOT_FOUND' });
    expect(missing!.keyId).toBeUndefined();
    expect(stderr).not.toContain('ap_w_secret');
    expect(stderr).not.toContain(key);
  });

  it('is readable lines with --log-format pretty, even piped, and requests.jsonl keeps the JSON', async () => {
    const dataDir = join(tempDir(), 'data');
    const dev = await startGatewayProcess(devArgs(dataDir, '--log-format', 'pretty'), { configDir });
    expect(await request(dev.ready.baseUrl, dataDir, '/v1/wallets', { key: dev.ready.workspace!.apiKey })).toBe(200);
    expect(await request(dev.ready.baseUrl, dataDir, '/v1/wallets')).toBe(401);
    const { stderr } = await dev.stop();
    const lines = stderr.trim().split('\n');
    expect(lines.some((l) => l.trim().startsWith('{'))).toBe(false);
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} {2}GET {4}\/v1\/wallets {2}200 {2}\d+\.\d ms {2}key_\w+$/));
    expect(lines).toContainEqual(expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} {2}GET {4}\/v1\/wallets {2}401 {2}\d+\.\d ms {2}- {2}UNAUTHORIZED$/));
    expect(lines).toContainEqual(expect.stringMatching(/ INFO {3}gateway ready {2}baseUrl=https:\/\/127\.0\.0\.1:\d+ /));
    expect(stderr).not.toContain('\u001b['); // no colours into a pipe
    const file = readFileSync(requestLogPath(dataDir), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as RequestLogEntry);
    expect(file.map((e) => [e.method, e.url, e.status, e.code])).toEqual([
      ['GET', '/v1/wallets', 200, undefined],
      ['GET', '/v1/wallets', 401, 'UNAUTHORIZED'],
    ]);
    expect(statSync(requestLogPath(dataDir)).mode & 0o777).toBe(0o600);
  });

  it('gateway start takes the format from --log-format, AGENTPAY_LOG_FORMAT or the config key logFormat', () => {
    expect(gatewayStartOptions({}).logFormat).toBe('auto');
    expect(gatewayStartOptions({ logFormat: 'json' }).logFormat).toBe('json');
    const dir = tempDir();
    writeFileSync(join(dir, 'gw.json'), JSON.stringify({ logFormat: 'pretty' }));
    expect(gatewayStartOptions({ config: 'gw.json' }, dir).logFormat).toBe('pretty');
    expect(gatewayStartOptions({ config: 'gw.json', logFormat: 'json' }, dir).logFormat).toBe('json');
    writeFileSync(join(dir, 'bad.json'), JSON.stringify({ logFormat: 'fancy' }));
    expect(() => gatewayStartOptions({ config: 'bad.json' }, dir)).toThrow(/logFormat must be "auto", "pretty", "json"/);
  });

  it('refuses a log format it does not know, naming the flag', async () => {
    const r = await cli(devArgs(join(tempDir(), 'data'), '--log-format', 'fancy'), { configDir });
    expect(r.exitCode).toBe(2);
    expect(r.stdout + r.stderr).toContain('--log-format');
  });
});

describe('RequestLogFile', () => {
  it('starts a new file at its size and keeps one older file, losing no line', async () => {
    const path = join(tempDir(), 'logs', 'requests.jsonl');
    const file = new RequestLogFile(path, 600);
    const entry = (i: number): RequestLogEntry => ({ time: new Date(0).toISOString(), reqId: `req_${i}`, method: 'GET', url: `/v1/n/${i}`, status: 200, ms: 1, ip: '127.0.0.1' });
    for (let i = 0; i < 8; i++) file.write(entry(i));
    await file.close();
    const read = (p: string) => readFileSync(p, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as RequestLogEntry).reqId);
    expect(existsSync(rotatedLogPath(path))).toBe(true);
    expect(read(rotatedLogPath(path)).length).toBeGreaterThan(0);
    // one rotation: the older file then the current one hold every line, in order
    expect([...read(rotatedLogPath(path)), ...read(path)]).toEqual(Array.from({ length: 8 }, (_, i) => `req_${i}`));
  });

  it('is followed across a rotation by followRequestLog', async () => {
    const dataDir = tempDir();
    const path = requestLogPath(dataDir);
    const file = new RequestLogFile(path, 400);
    const seen: string[] = [];
    const entry = (i: number): RequestLogEntry => ({ time: new Date(0).toISOString(), reqId: `req_${i}`, method: 'GET', url: `/v1/n/${i}`, status: i % 2 ? 404 : 200, ms: 1, ip: '127.0.0.1' });
    const following = followRequestLog({ dataDir, filters: {}, fromStart: true, intervalMs: 10, count: 10, timeoutMs: 20_000, onEntry: (e) => seen.push(e.reqId) });
    for (let i = 0; i < 10; i++) {
      file.write(entry(i));
      // the follower reads each entry before the next is written (and the file rotated), as it follows a live gateway
      await until(() => seen.length > i, `req_${i} read by the follower`, { everyMs: 5 });
    }
    const { end } = await following;
    await file.close();
    expect(end).toBe('count');
    expect(seen).toEqual(Array.from({ length: 10 }, (_, i) => `req_${i}`));
    expect(existsSync(rotatedLogPath(path))).toBe(true);
  });
});

describe('agentpay logs tail', () => {
  let dev: GatewayProcess;
  let dataDir: string;
  const tail = (...args: string[]) => cli(['logs', 'tail', '--data-dir', dataDir, ...args], { configDir });
  const entries = (stdout: string) => stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as RequestLogEntry);

  beforeAll(async () => {
    dataDir = join(tempDir(), 'data');
    dev = await startGatewayProcess(devArgs(dataDir), { configDir });
    const key = dev.ready.workspace!.apiKey;
    const base = dev.ready.baseUrl;
    expect(await request(base, dataDir, '/v1/wallets', { key })).toBe(200);
    expect(await request(base, dataDir, '/v1/wallets')).toBe(401);
    expect(await request(base, dataDir, '/v1/nope')).toBe(404);
    expect(await request(base, dataDir, '/health')).toBe(200);
    expect(await request(base, dataDir, '/v1/wallets/wal_missing', { key })).toBe(404);
  });
  afterAll(async () => {
    await dev?.stop();
  });

  it('--status 4xx prints only client errors, as JSON lines when piped', async () => {
    const r = await tail('--from-start', '--status', '4xx', '--count', '3', '--timeout', '20');
    expect(r.exitCode).toBe(0);
    expect(entries(r.stdout).map((e) => [e.url, e.status])).toEqual([
      ['/v1/wallets', 401],
      ['/v1/nope', 404],
      ['/v1/wallets/wal_missing', 404],
    ]);
  });

  it('--path is a prefix of the path and --code an error code; filters combine', async () => {
    const byPath = await tail('--from-start', '--path', '/v1/wallets', '--count', '3', '--timeout', '20');
    expect(entries(byPath.stdout).map((e) => e.status)).toEqual([200, 401, 404]);
    const byCode = await tail('--from-start', '--code', 'WALLET_NOT_FOUND', '--count', '1', '--timeout', '20');
    expect(entries(byCode.stdout)).toEqual([expect.objectContaining({ url: '/v1/wallets/wal_missing', status: 404, code: 'WALLET_NOT_FOUND', keyId: expect.stringMatching(/^key_/) })]);
    const both = await tail('--from-start', '--code', 'NOT_FOUND', '--code', 'UNAUTHORIZED', '--path', '/v1/', '--count', '2', '--timeout', '20');
    expect(entries(both.stdout).map((e) => [e.url, e.code])).toEqual([
      ['/v1/wallets', 'UNAUTHORIZED'],
      ['/v1/nope', 'NOT_FOUND'],
    ]);
    const exact = await tail('--from-start', '--status', '200,401', '--path', '/v1/', '--count', '2', '--timeout', '20');
    expect(entries(exact.stdout).map((e) => e.status)).toEqual([200, 401]);
  });

  it('follows new requests live, from now on by default', async () => {
    const proc = execa(process.execPath, [BIN, 'logs', 'tail', '--data-dir', dataDir, '--status', '5xx,401', '--count', '1', '--timeout', '30', '--json'], {
      env: { ...process.env, NODE_ENV: 'production', AGENTPAY_CONFIG_DIR: configDir },
      reject: false,
      stdin: 'ignore',
    });
    // it says it follows once it has opened the log; requests before that are not its to print
    await new Promise<void>((res) => proc.stderr!.on('data', (d: Buffer) => d.toString().includes('Following') && res()));
    expect(await request(dev.ready.baseUrl, dataDir, '/health')).toBe(200);
    expect(await request(dev.ready.baseUrl, dataDir, '/v1/receipts')).toBe(401);
    const r = await proc;
    expect(r.exitCode).toBe(0);
    expect(entries(String(r.stdout))).toEqual([expect.objectContaining({ url: '/v1/receipts', status: 401, code: 'UNAUTHORIZED' })]);
  });

  it('exits 1 with TIMEOUT when fewer than --count requests match within --timeout', async () => {
    const r = await tail('--code', 'RATE_LIMITED', '--count', '1', '--timeout', '1', '--json');
    expect(r.exitCode).toBe(1);
    expect(json(r).error).toMatchObject({ code: 'TIMEOUT', details: { count: 1, arrived: 0 } });
  });

  it('refuses a malformed --status, naming the flag and the accepted forms', async () => {
    const r = await tail('--status', '4x', '--json');
    expect(r.exitCode).toBe(2);
    expect(json(r).error.message).toContain('--status');
    expect(json(r).error.message).toContain('4xx');
  });

  it('says no gateway runs on a data dir that has neither a gateway nor a log', async () => {
    const r = await cli(['logs', 'tail', '--data-dir', join(tempDir(), 'empty'), '--json'], { configDir });
    expect(r.exitCode).toBe(3);
    expect(json(r).error.code).toBe('GATEWAY_NOT_RUNNING');
  });

  it('has --help', async () => {
    const r = await cli(['logs', 'tail', '--help'], { configDir });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('--status');
    expect(r.stdout).toContain('requests.jsonl');
  });
});
