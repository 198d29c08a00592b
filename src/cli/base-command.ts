/**
 * The base of every `agentpay` command: the global flags, flag parsing before `run()`,
 * the output mode, the connection to a gateway, and the one `catch` that turns any
 * failure into `error CODE: message` plus a next step (or, with --json, the error
 * envelope on stdout) and the documented exit code.
 */
import { resolve } from 'node:path';
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import type { AgentpayClient } from 'agentpay-sdk/client';
import { makeClient, resolveConnection, type Connection } from './client.js';
import { describeError, type Report } from './errors/index.js';
import { DEV_ROLES } from './local-gateway.js';
import { noticeOldFlags } from './old-names.js';
import { closeOpened } from './open-connections.js';
import { Output } from './output.js';
import { flagsFromEnv } from './setting-source.js';

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<T['baseFlags'] & T['flags']>;
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

const GLOBAL = 'GLOBAL';

export const jsonFlag = Flags.boolean({ description: 'print JSON (the default when stdout is not a terminal)', helpGroup: GLOBAL });

/** Which gateway, key and CA to use; see docs/cli.md for the resolution order. */
export const connectionFlags = {
  profile: Flags.string({ description: 'saved profile to use (env AGENTPAY_PROFILE)', helpGroup: GLOBAL }),
  'gateway-url': Flags.string({ description: 'gateway URL, e.g. https://127.0.0.1:4402 (env AGENTPAY_GATEWAY_URL; old name --base-url)', aliases: ['base-url'], helpGroup: GLOBAL }),
  'api-key': Flags.string({ description: 'API key (env AGENTPAY_API_KEY)', helpGroup: GLOBAL }),
  ca: Flags.string({ description: "path of the gateway's CA certificate (env AGENTPAY_CA)", helpGroup: GLOBAL }),
  'data-dir': Flags.string({ description: "a local dev gateway's data dir: URL, CA and dev keys come from it [default: the nearest .agentpay, here or in a parent directory]", helpGroup: GLOBAL }),
  as: Flags.option({ options: DEV_ROLES, description: 'which dev key of --data-dir (or the nearest .agentpay) to use [default: workspace]', helpGroup: GLOBAL })(),
};

/**
 * The root of every command: --json, parsing before run(), the output mode and the one
 * catch. Commands that serve a gateway (dev, gateway start) extend this directly.
 */
export abstract class AgentpayCommand<T extends typeof Command> extends Command {
  static override baseFlags: { json: typeof jsonFlag } = { json: jsonFlag };

  protected flags!: CommandFlags<T>;
  protected args!: CommandArgs<T>;
  protected out!: Output;

  public override async init(): Promise<void> {
    await super.init();
    noticeOldFlags(this.argv);
    // parse here, not in run(), so that usage errors reach the one catch below
    const { flags, args } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (this.ctor as typeof AgentpayCommand).baseFlags,
      args: this.ctor.args,
      strict: this.ctor.strict,
    });
    this.flags = flags as CommandFlags<T>;
    this.args = args as CommandArgs<T>;
    this.out = Output.choose((flags as { json?: boolean }).json);
  }

  /** The command's connections are closed when it ends (./open-connections.ts): the process exits with its work. */
  protected override async finally(err: Error | undefined): Promise<unknown> {
    await closeOpened();
    return super.finally(err);
  }

  /** The gateway URL a connection error should name, if known. */
  protected gatewayUrl(): string | undefined {
    return undefined;
  }

  /** The API key the command used, if any: its kind decides which next step a 403 gets. */
  protected apiKeyInUse(): string | undefined {
    return undefined;
  }

  /** The flags whose value came from their environment variable, not the command line (name -> variable). */
  protected flagsFromEnv(): Map<string, string> {
    const ctor = this.ctor as typeof AgentpayCommand;
    return flagsFromEnv(this.argv, { ...ctor.baseFlags, ...ctor.flags } as Record<string, { env?: string; char?: string }>);
  }

  private wantsJson(): boolean {
    const json = (this.flags as { json?: boolean } | undefined)?.json;
    return json ?? this.argv.includes('--json');
  }

  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    if (err instanceof Errors.ExitError) throw err;
    const baseUrl = this.gatewayUrl();
    // the flags typed, so that a gateway message naming an API field can name the flag instead
    const givenFlags = Object.entries((this.flags ?? {}) as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k]) => k);
    const commandFlags = Object.keys(this.ctor.flags ?? {});
    const knownFlags = Object.keys({ ...(this.ctor as typeof AgentpayCommand).baseFlags, ...this.ctor.flags });
    const apiKey = this.apiKeyInUse();
    const dataDir = (this.flags as Record<string, unknown> | undefined)?.['data-dir'];
    const report = describeError(err, {
      ...(baseUrl ? { baseUrl } : {}),
      ...(apiKey ? { apiKey } : {}),
      ...(typeof dataDir === 'string' ? { dataDir: resolve(dataDir) } : {}),
      command: `agentpay ${this.id?.replace(/:/g, ' ') ?? ''}`.trim(),
      givenFlags,
      commandFlags,
      knownFlags,
      envFlags: this.flagsFromEnv(),
    });
    // the envelope goes to stdout whenever results would be JSON there (--json, or stdout not a terminal)
    printReport(report, err, this.wantsJson(), this.out ? this.out.json : !process.stdout.isTTY);
    return this.exit(report.exit);
  }
}

/**
 * Prints a Report: the error envelope on stdout with --json; else `error CODE: message` and the
 * next step on stderr for people, and, when stdout is not a terminal (`envelope`: a pipe, a file,
 * `| jq`), the envelope on stdout as well, so a script reading stdout sees the failure as JSON,
 * just as it sees results. Also used by the command_not_found hook, which runs outside any command.
 */
export function printReport(r: Report, err: Error, json: boolean, envelope: boolean = !process.stdout.isTTY): void {
  const line = JSON.stringify({ error: { code: r.code, message: r.message, details: r.details } }) + '\n';
  if (json) {
    process.stdout.write(line);
    if (r.bug) process.stderr.write(`${err.stack ?? err.message}\n`);
    return;
  }
  if (envelope) process.stdout.write(line);
  const lines = [`error ${r.code}: ${r.message}`];
  if (r.tryNext) lines.push(`Try: ${r.tryNext}`);
  if (r.bug) {
    lines.push('This is a bug in agentpay. Please report it with the command you ran and this output:');
    lines.push(err.stack ?? String(err));
  }
  process.stderr.write(lines.join('\n') + '\n');
}

/** A command that talks to a gateway: the global connection flags and a client. */
export abstract class BaseCommand<T extends typeof Command> extends AgentpayCommand<T> {
  static override baseFlags = { json: jsonFlag, ...connectionFlags };

  private conn: Connection | undefined;

  /**
   * The resolved gateway connection (flags > env > profile > ./.agentpay).
   * `optionalProfile` for commands that save a profile under --profile NAME.
   */
  protected connection(opts: { optionalProfile?: boolean } = {}): Connection {
    this.conn ??= resolveConnection(this.flags as Record<string, never>, opts);
    return this.conn;
  }

  /** An API client for the resolved gateway; `auth: false` for public routes. */
  protected client(opts: { auth?: boolean } = {}): AgentpayClient {
    return makeClient(this.connection(), opts);
  }

  protected override gatewayUrl(): string | undefined {
    return this.conn?.baseUrl;
  }

  protected override apiKeyInUse(): string | undefined {
    return this.conn?.apiKey;
  }
}
