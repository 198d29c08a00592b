/**
 * The CLI's help class (package.json `oclif.helpClass`): oclif's help, except that
 * - a topic asked for with --json (`agentpay wallets --json`, a topic and no command) prints its
 *   commands as JSON on stdout, like every other command's output with --json:
 *   `{topic, description, commands: [{id, summary}]}`, ids with spaces as typed;
 * - text fits the terminal's width (80 columns when stdout is not a terminal): a command's
 *   summary and description are wrapped as paragraphs (the sources break their lines at about
 *   110 columns, which oclif kept, so each line wrapped on its own), an example too long for a
 *   line is broken between shell words and continued with ` \`, and a flag list oclif shows
 *   one flag under another keeps to the width as well.
 */
import { stripVTControlCharacters } from 'node:util';
import { CommandHelp, Help, type Command, type Interfaces } from '@oclif/core';

/** --json among the arguments, before any `--` */
function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

type ListOptions = Parameters<CommandHelp['renderList']>[1];

/** Columns a string takes on the terminal (colours aside; the help's text is one column per character). */
const columns = (s: string) => stripVTControlCharacters(s).length;

/**
 * Prose with its source line breaks removed: the lines of a paragraph joined into one, paragraphs
 * (blank lines) kept, and a line that starts a list item ("- ", "* ", "1. ") or is indented kept as its own.
 */
export function reflow(text: string): string {
  return text
    .split(/\n[ \t]*\n/)
    .map((paragraph) => {
      const lines: string[] = [];
      for (const line of paragraph.split('\n')) {
        const own = lines.length === 0 || /^\s/.test(line) || /^(?:[-*]|\d+\.)\s/.test(line);
        if (own) lines.push(line.trimEnd());
        else lines[lines.length - 1] += ` ${line.trim()}`;
      }
      return lines.join('\n');
    })
    .join('\n\n');
}

/** A command line's words: split at spaces outside quotes, so no quoted string is cut in two. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === '\\' && quote === '"' && i + 1 < line.length) word += c + line[++i];
      else {
        if (c === quote) quote = undefined;
        word += c;
      }
    } else if (c === '"' || c === "'") {
      quote = c;
      word += c;
    } else if (c === '\\' && i + 1 < line.length) {
      word += c + line[++i];
    } else if (c === ' ') {
      if (word) words.push(word);
      word = '';
    } else word += c;
  }
  if (word) words.push(word);
  return words;
}

/** A command line's words with each flag kept together with its value (`--price 25`). */
function flagUnits(words: readonly string[]): string[] {
  const units: string[] = [];
  for (const word of words) {
    const last = units[units.length - 1];
    const flagAlone = last !== undefined && /^--?[\w-]+$/.test(last);
    if (flagAlone && !word.startsWith('-')) units[units.length - 1] = `${last} ${word}`;
    else units.push(word);
  }
  return units;
}

/**
 * A command line that fits `width` columns: broken between words, a flag kept on one line with its
 * value, each broken line ending in ` \` (so it still pastes into a shell as one command) and the
 * next indented by 4. A single word longer than a line stays whole.
 */
export function breakCommand(line: string, width: number): string[] {
  if (columns(line) <= width) return [line];
  const lines: string[] = [];
  let current = '';
  for (const word of flagUnits(shellWords(line))) {
    const indent = lines.length === 0 ? 0 : 4;
    const candidate = current ? `${current} ${word}` : word;
    // room for the " \" that continues the line
    if (!current || indent + columns(candidate) + 2 <= width) current = candidate;
    else {
      lines.push(current);
      current = word;
    }
  }
  lines.push(current);
  return lines.map((l, i) => `${i === 0 ? '' : '    '}${l}${i < lines.length - 1 ? ' \\' : ''}`);
}

/**
 * The words of a usage line, a bracketed group (`[--data <value> | --data-file <value>]`) being
 * one word, so that a line is never broken inside a group.
 */
export function usageWords(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let depth = 0;
  for (const c of line) {
    if (c === '[' || c === '(' || c === '<') depth++;
    else if ((c === ']' || c === ')' || c === '>') && depth > 0) depth--;
    if (c === ' ' && depth === 0) {
      if (word) words.push(word);
      word = '';
    } else word += c;
  }
  if (word) words.push(word);
  return words;
}

/**
 * Words filled into lines of `width` columns, lines after the first indented by `indent`. A word
 * too long for a line of its own (a long bracketed group) is broken at its spaces.
 */
function fill(words: readonly string[], width: number, indent: number): string[] {
  const lines: string[] = [];
  let current = '';
  for (const word of words.flatMap((w) => (indent + columns(w) > width ? w.split(' ') : [w]))) {
    const candidate = current ? `${current} ${word}` : word;
    if (!current || (lines.length ? indent : 0) + columns(candidate) <= width) current = candidate;
    else {
      lines.push(current);
      current = word;
    }
  }
  if (current) lines.push(current);
  return lines.map((l, i) => (i === 0 ? l : ' '.repeat(indent) + l));
}

/** A text whose first line (a summary) is wrapped to `width`; the rest as it is. */
function wrapFirstLine(f: Help, text: string, width: number): string {
  const end = text.indexOf('\n');
  const first = end === -1 ? text : text.slice(0, end);
  if (columns(first) <= width) return text;
  return f.wrap(first, 0) + (end === -1 ? '' : text.slice(end));
}

/**
 * A flag (or command) list with each entry's text under its name, indented by 4 beyond the
 * list's own indentation. oclif switches a list to this layout when a description runs over four
 * lines, and then wraps the text 2 columns too wide for the indentation it adds.
 */
function renderStacked(f: Help | CommandHelp, input: (string | undefined)[][], indentation: number): string {
  return input
    .filter(([left, right]) => left || right)
    .map(([left, right]) => {
      const name = left ? f.wrap(left.trim(), indentation) : '';
      const text = right ? f.indent(f.wrap(right.trim(), indentation + 4), 4) : '';
      return [name, text].filter(Boolean).join('\n');
    })
    .join('\n\n');
}

/** oclif's list, unless some line runs past the width: then one entry under another. */
function renderListWithin(f: Help | CommandHelp, rendered: string, input: (string | undefined)[][], opts: { indentation: number }, maxWidth: number): string {
  const widest = Math.max(0, ...rendered.split('\n').map(columns));
  return widest + opts.indentation <= maxWidth ? rendered : renderStacked(f, input, opts.indentation);
}

class AgentpayCommandHelp extends CommandHelp {
  /**
   * `$ agentpay COMMAND ARGS FLAGS`, filled to the section's width between bracketed groups.
   * (oclif measures the line with the command id still a template, so a long id ran over.)
   */
  protected override usage(): string {
    const id = this.command.id.replace(/:/g, ' ');
    const usages = this.command.usage === undefined ? [this.defaultUsage()] : typeof this.command.usage === 'string' ? [this.command.usage] : this.command.usage;
    return usages
      .map((u) => {
        const rest = this.render(u).replace('<%= command.id %>', '').trim().replace(new RegExp(`^(${this.command.id}|${id})\\b`), '').trim();
        return fill(usageWords(`$ ${this.config.bin} ${id} ${rest}`.trim()), this.opts.maxWidth - this.indentSpacing, 2).join('\n');
      })
      .join('\n');
  }

  /** The summary, then the description, as wrapped paragraphs. */
  protected override description(): string | undefined {
    const { summary, description } = this.command;
    if (!description) return undefined;
    return this.wrap(reflow(this.render([summary, description].filter(Boolean).join('\n\n'))));
  }

  /** Each example command on lines that fit the section (indented by 2); described examples as oclif shows them. */
  protected override examples(examples: Command.Example[] | string | undefined): string | undefined {
    if (!examples || examples.length === 0) return undefined;
    const list: Command.Example[] = typeof examples === 'string' ? [examples] : examples;
    const bin = this.config.bin;
    return list
      .map((example) => {
        if (typeof example !== 'string' || example.includes('\n')) return super.examples([example]) ?? '';
        const line = this.render(example);
        const command = line.startsWith(bin) ? `$ ${line}` : line;
        return breakCommand(command, this.opts.maxWidth - this.indentSpacing).join('\n');
      })
      .join('\n\n');
  }

  override renderList(input: (string | undefined)[][], opts: ListOptions): string {
    return renderListWithin(this, super.renderList(input, opts), input, opts, this.opts.maxWidth);
  }
}

export default class AgentpayHelp extends Help {
  protected override CommandHelpClass = AgentpayCommandHelp;
  /** the command whose help is being shown: its summary heads the page, wrapped */
  private shown: Command.Loadable | undefined;

  override async showCommandHelp(command: Command.Loadable): Promise<void> {
    this.shown = command;
    try {
      await super.showCommandHelp(command);
    } finally {
      this.shown = undefined;
    }
  }

  /** The summary heading a command's help is wrapped to the width; in lists of commands it stays one line (the list wraps it). */
  protected override summary(c: Command.Loadable): string | undefined {
    const summary = super.summary(c);
    return summary && c === this.shown ? this.wrap(summary, 0) : summary;
  }

  override renderList(input: (string | undefined)[][], opts: ListOptions): string {
    return renderListWithin(this, super.renderList(input, opts), input, opts, this.opts.maxWidth);
  }

  /** The root help, its first line (the package's description) wrapped. */
  override formatRoot(): string {
    return wrapFirstLine(this, super.formatRoot(), this.opts.maxWidth);
  }

  /** A topic's help, its first line (the topic's description) wrapped. */
  protected override formatTopic(topic: Interfaces.Topic): string {
    return wrapFirstLine(this, super.formatTopic(topic), this.opts.maxWidth);
  }

  protected override async showTopicHelp(topic: Interfaces.Topic): Promise<void> {
    if (!jsonAsked(process.argv.slice(2))) return super.showTopicHelp(topic);
    // every visible command under the topic, subtopics' included (payouts: payouts destination list)
    const commands = this.sortedCommands
      .filter((c) => c.id.startsWith(`${topic.name}:`))
      .map((c) => {
        const text = c.summary ?? c.description;
        return { id: c.id.replace(/:/g, ' '), summary: text ? this.render(text).split('\n')[0]! : null };
      });
    const out = { topic: topic.name.replace(/:/g, ' '), description: topic.description ?? null, commands };
    process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  }
}
