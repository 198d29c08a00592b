import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { CliError } from '../src/cli/errors/index.js';
import { followEvents } from '../src/cli/events.js';
import { forwardEvent, forwardedLine, listenSecret, parseEventTypes, parseHttpUrl } from '../src/cli/webhooks.js';

export default class Listen extends BaseCommand<typeof Listen> {
  static override summary = 'Follow your events live and forward each to a local URL, signed like a webhook delivery';
  static override description = [
    'Like a registered webhook endpoint, without registering one: every new event (or only those of --events) is',
    'POSTed to --forward-to as JSON with an agentpay-signature header, signed with a secret this command prints at',
    'start (kept in the CLI config directory, so it stays the same across runs). Check it in your receiver with',
    'verifyWebhookSignature from agentpay-sdk/webhooks. One line per forwarded event with the answer\'s status (with',
    '--json, or piped: the secret as the first JSON line, then one JSON object per event). Failed forwards are not',
    'retried. Stops on Ctrl-C, after --count events, or after --timeout seconds.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> listen --forward-to http://localhost:3000/hook',
    '<%= config.bin %> listen --forward-to http://localhost:3000/hook --events approval.requested,payout.returned',
    '<%= config.bin %> listen --forward-to http://localhost:3000/hook --count 1 --timeout 60 --json',
  ];
  static override flags = {
    'forward-to': Flags.string({ description: 'the local URL each event is POSTed to', required: true }),
    events: Flags.string({ description: 'only these event types, comma-separated [default: every type]' }),
    interval: Flags.integer({ description: 'seconds between polls, 1 to 3600', min: 1, max: 3600, default: 2 }),
    count: Flags.integer({ description: 'exit 0 after forwarding this many events', min: 1 }),
    timeout: Flags.integer({ description: 'stop after this many seconds; with --count, exit 1 (TIMEOUT) if fewer came [default: never]', min: 1 }),
  };

  async run(): Promise<void> {
    const { interval, count, timeout } = this.flags;
    const url = parseHttpUrl(this.flags['forward-to'], '--forward-to');
    const types = this.flags.events !== undefined ? new Set<string>(parseEventTypes(this.flags.events)) : undefined;
    const client = this.client();
    const secret = listenSecret();
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.once('SIGINT', onSigint);
    process.once('SIGTERM', onSigint);
    let forwarded = 0;
    // forwards go out one at a time, in the order the events were recorded
    let chain: Promise<void> = Promise.resolve();
    try {
      const { end } = await followEvents(client, {
        since: null, intervalMs: interval * 1000, timeoutMs: timeout === undefined ? undefined : timeout * 1000,
        onEvent: (e) => {
          if (types && !types.has(e.type)) return;
          if (count !== undefined && forwarded >= count) return;
          forwarded++;
          if (count !== undefined && forwarded >= count) stop.abort();
          chain = chain.then(async () => {
            const f = await forwardEvent(url, e, secret);
            process.stdout.write((this.out.json ? JSON.stringify({ event: f.event, status: f.status ?? null, error: f.error ?? null }) : forwardedLine(f, url)) + '\n');
          });
        },
        onNote: (m) => this.out.note(m),
        onStart: () => {
          if (this.out.json) process.stdout.write(JSON.stringify({ secret, forwardTo: url, baseUrl: this.connection().baseUrl }) + '\n');
          this.out.note(`Ready! Forwarding ${types ? [...types].join(', ') : 'all'} events from ${this.connection().baseUrl} to ${url}. Your webhook signing secret is ${secret} (Ctrl-C to quit)`);
        },
        signal: stop.signal,
      });
      await chain;
      if (end === 'timeout' && count !== undefined && forwarded < count) {
        throw new CliError('TIMEOUT', `${forwarded} of the ${count} event${count === 1 ? '' : 's'} waited for arrived within ${timeout} s`, {
          details: { timeoutSeconds: timeout, count, arrived: forwarded },
          tryNext: 'wait longer with a larger --timeout, or make one happen with agentpay trigger payout.returned',
        });
      }
    } finally {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
    }
  }
}
