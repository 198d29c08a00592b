import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';
import { CliError } from '../../src/cli/errors/index.js';

export default class LogsTail extends AgentpayCommand<typeof LogsTail> {
  static override summary = "Follow a local gateway's requests as they happen, filtered by status, path or error code";
  static override description = [
    'Prints one line per request the gateway of --data-dir answers (time, method, path, status, latency, key id, error code),',
    'from now on (--from-start: the ones already logged first), until Ctrl-C. It reads DATA_DIR/logs/requests.jsonl, which',
    'agentpay dev and agentpay gateway start write (rotated at 10 MiB), so it works for a gateway on this machine; for a fleet,',
    "read each instance's JSON log on stderr in your log system. With --json, or piped, each entry is one JSON line.",
    'In a script, --count N --timeout S waits for N matching requests and exits 0, or exits 1 with TIMEOUT.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> logs tail',
    '<%= config.bin %> logs tail --status 4xx,5xx',
    '<%= config.bin %> logs tail --path /v1/x402 --code INSUFFICIENT_FUNDS',
    '<%= config.bin %> logs tail --data-dir /var/lib/agentpay --status 500 --json',
  ];
  static override flags = {
    'data-dir': Flags.string({ description: "the gateway's data dir [default: the nearest .agentpay, here or in a parent directory]" }),
    status: Flags.string({ description: 'only these statuses: a class (4xx) or a status (404); several: 4xx,500 or the flag again', multiple: true }),
    path: Flags.string({ description: 'only paths starting with this, e.g. /v1/x402' }),
    code: Flags.string({ description: 'only answers with this error code, e.g. RATE_LIMITED; several: the flag again', multiple: true }),
    method: Flags.string({ description: 'only this HTTP method, e.g. POST' }),
    'from-start': Flags.boolean({ description: 'print the requests already in the log first' }),
    count: Flags.integer({ description: 'exit 0 after this many matching requests', min: 1 }),
    timeout: Flags.integer({ description: 'stop after this many seconds; with --count, exit 1 (TIMEOUT) if fewer came [default: never]', min: 1 }),
  };

  async run(): Promise<void> {
    const { resolve } = await import('node:path');
    const { existsSync } = await import('node:fs');
    const { followRequestLog, parseStatusFilter } = await import('../../src/cli/logs.js');
    const { requestLogPath } = await import('../../src/gateway/request-log.js');
    const { requestLine, colorsFor } = await import('../../src/cli/log-pretty.js');
    const { findLocalDataDir, gatewayNotRunning, LOCAL_DATA_DIR, runningGateway } = await import('../../src/cli/local-gateway.js');
    const f = this.flags;
    const dataDir = resolve(f['data-dir'] ?? findLocalDataDir() ?? LOCAL_DATA_DIR);
    if (f.status) parseStatusFilter(f.status); // a malformed --status is refused before waiting
    const running = runningGateway(dataDir);
    const file = requestLogPath(dataDir);
    if (!running && !existsSync(file)) throw gatewayNotRunning(dataDir);
    const color = colorsFor(process.stdout);
    const stop = new AbortController();
    const onSignal = () => stop.abort();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      const following = () => this.out.note(
        running
          ? `Following the requests of ${running.baseUrl} (${file}); Ctrl-C to stop.`
          : `No gateway is running on ${dataDir} now; following ${file} for when one starts. Ctrl-C to stop.`,
      );
      const { end, printed } = await followRequestLog({
        onFollowing: following,
        dataDir,
        filters: { ...(f.status ? { status: f.status } : {}), ...(f.path ? { path: f.path } : {}), ...(f.code ? { code: f.code } : {}), ...(f.method ? { method: f.method } : {}) },
        fromStart: f['from-start'],
        count: f.count,
        timeoutMs: f.timeout === undefined ? undefined : f.timeout * 1000,
        onEntry: (e) => process.stdout.write((this.out.json ? JSON.stringify(e) : requestLine(e, color)) + '\n'),
        signal: stop.signal,
      });
      if (end === 'timeout' && f.count !== undefined) {
        throw new CliError('TIMEOUT', `${printed} of the ${f.count} matching request${f.count === 1 ? '' : 's'} waited for arrived within ${f.timeout} s`, {
          details: { timeoutSeconds: f.timeout, count: f.count, arrived: printed },
          tryNext: 'wait longer with a larger --timeout, or loosen the filters (--status, --path, --code, --method)',
        });
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
  }
}
