import { Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { CliError } from '../../src/cli/errors/index.js';
import { eventLine, eventTypeFlag, followEvents } from '../../src/cli/events.js';

export default class EventsTail extends BaseCommand<typeof EventsTail> {
  static override summary = 'Follow your alerts as the gateway records them, oldest first, until Ctrl-C';
  static override description = [
    'Prints each new event once, as one line (with --json, or piped: one JSON object per line), polling every',
    '--interval seconds. It starts after the newest event there is, or after --since. While the gateway is',
    'unreachable or restarting it says so on stderr and keeps trying. It stops on Ctrl-C, after --count events,',
    'or after --timeout seconds; in a script, --count N --timeout S waits for N events and exits 0, or exits 1',
    'with TIMEOUT if fewer came within S seconds.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> events tail --as provider',
    '<%= config.bin %> events tail --type payout.returned --count 1 --timeout 60 --json',
    '<%= config.bin %> events tail --since evt_123',
  ];
  static override flags = {
    type: eventTypeFlag(),
    since: Flags.string({ description: 'start after this event id (its newer events are printed first) [default: the newest now]' }),
    interval: Flags.integer({ description: 'seconds between polls, 1 to 3600', min: 1, max: 3600, default: 2 }),
    count: Flags.integer({ description: 'exit 0 after this many events', min: 1 }),
    timeout: Flags.integer({ description: 'stop after this many seconds; with --count, exit 1 (TIMEOUT) if fewer came [default: never]', min: 1 }),
  };

  async run(): Promise<void> {
    const { type, since, interval, count, timeout } = this.flags;
    const stop = new AbortController();
    const onSigint = () => stop.abort();
    process.once('SIGINT', onSigint);
    process.once('SIGTERM', onSigint);
    try {
      const { end, handed } = await followEvents(this.client(), {
        since: since ?? null, type, intervalMs: interval * 1000, count, timeoutMs: timeout === undefined ? undefined : timeout * 1000,
        onEvent: (e) => process.stdout.write((this.out.json ? JSON.stringify(e) : eventLine(e)) + '\n'),
        onNote: (m) => this.out.note(m),
        onStart: (after) => this.out.note(`Following ${type ?? 'all'} events at ${this.connection().baseUrl} ${after ? `after ${after}` : 'from the first one'}; Ctrl-C to stop.`),
        signal: stop.signal,
      });
      // without --count, --timeout only says how long to follow
      if (end === 'timeout' && count !== undefined) {
        throw new CliError('TIMEOUT', `${handed} of the ${count} ${type ? `${type} ` : ''}event${count === 1 ? '' : 's'} waited for arrived within ${timeout} s`, {
          details: { timeoutSeconds: timeout, count, arrived: handed, ...(type ? { type } : {}) },
          tryNext: 'wait longer with a larger --timeout, or check what happened with agentpay events list',
        });
      }
    } finally {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
    }
  }
}
