/**
 * oclif's `command_not_found` hook (package.json `oclif.hooks`): an unknown command is a usage
 * error in the CLI's own format, like any other (`error USAGE: ...` and a next step on stderr, or
 * the JSON error envelope on stdout with --json), exit 2, instead of oclif's
 * ` ›   Error: command wallets:foo not found`.
 */
import type { Hook } from '@oclif/core';
import { printReport } from '../base-command.js';
import { describeError, EXIT, usageError } from '../errors.js';

const hook: Hook.CommandNotFound = async function (opts) {
  const words = opts.id.split(':');
  // the longest known prefix (a topic such as `wallets`, or a command) is where help can start
  let known = words.length - 1;
  while (known > 0 && !opts.config.findTopic(words.slice(0, known).join(':')) && !opts.config.findCommand(words.slice(0, known).join(':'))) known--;
  const topic = words.slice(0, known).join(':');
  const typed = words.join(' ');
  const siblings = topic
    ? opts.config.commands
        .filter((c) => !c.hidden && c.id.startsWith(`${topic}:`) && c.id.split(':').length === known + 1)
        .map((c) => c.id.split(':')[known]!)
        .sort()
    : [];
  const message = `unknown command "${typed}"` + (siblings.length ? `; ${words.slice(0, known).join(' ')} has: ${siblings.join(', ')}` : '');
  const tryNext = topic ? `agentpay ${words.slice(0, known).join(' ')} --help` : 'agentpay --help';
  const err = usageError(message, tryNext, { command: typed });
  const argv = opts.argv ?? [];
  const end = argv.indexOf('--');
  const json = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  printReport(describeError(err), err, json);
  this.exit(EXIT.USAGE);
};

export default hook;
