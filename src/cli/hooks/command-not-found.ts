/**
 * oclif's `command_not_found` hook (package.json `oclif.hooks`): an unknown command is a usage
 * error in the CLI's own format, like any other (`error USAGE: ...` and a next step on stderr, or
 * the JSON error envelope on stdout with --json), exit 2, instead of oclif's
 * ` ›   Error: command wallets:foo not found`.
 *
 * A mistyped word gets a "did you mean" (`agentpay serach` -> `search`), said and never run:
 * oclif's plugin-not-found would ask on a terminal and then run its guess, and a guessed command
 * could move money. Nothing here reads stdin, so a script never waits.
 */
import type { Hook } from '@oclif/core';
import { printReport } from '../base-command.js';
import { describeError, EXIT, usageError } from '../errors/index.js';
import { closest } from '../suggest.js';

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
  // the words that could stand where the unknown one is: the next word of every visible command under the known prefix
  const next = opts.config.commands
    .filter((c) => !c.hidden && (topic ? c.id.startsWith(`${topic}:`) : true) && c.id.split(':').length > known)
    .map((c) => c.id.split(':')[known]!);
  // the nearest word there, then the words after it as long as they (or their nearest) go on to a known topic or command
  let suggestion: string | undefined;
  const guess = closest(words[known]!, next);
  if (guess !== undefined) {
    const path = [...words.slice(0, known), guess];
    for (const word of words.slice(known + 1)) {
      const under = opts.config.commands
        .filter((c) => !c.hidden && c.id.startsWith(`${path.join(':')}:`))
        .map((c) => c.id.split(':')[path.length]!);
      const step = under.includes(word) ? word : closest(word, under);
      if (step === undefined) break;
      path.push(step);
    }
    suggestion = path.join(' ');
  }
  const message =
    `unknown command "${typed}"` +
    (suggestion ? `; did you mean "${suggestion}"?` : '') +
    (siblings.length ? `${suggestion ? ' ' : '; '}${words.slice(0, known).join(' ')} has: ${siblings.join(', ')}` : '');
  const tryNext = suggestion ? `agentpay ${suggestion} --help` : topic ? `agentpay ${words.slice(0, known).join(' ')} --help` : 'agentpay --help';
  const err = usageError(message, tryNext, { command: typed, ...(suggestion ? { suggestion } : {}) });
  const argv = opts.argv ?? [];
  const end = argv.indexOf('--');
  const json = (end === -1 ? argv : argv.slice(0, end)).includes('--json');
  printReport(describeError(err), err, json);
  this.exit(EXIT.USAGE);
};

export default hook;
