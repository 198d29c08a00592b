/**
 * The CLI's help class (package.json `oclif.helpClass`): oclif's help, except that a topic
 * asked for with --json (`agentpay wallets --json`, a topic and no command) prints its
 * commands as JSON on stdout, like every other command's output with --json:
 * `{topic, description, commands: [{id, summary}]}`, ids with spaces as typed.
 */
import { Help, type Interfaces } from '@oclif/core';

/** --json among the arguments, before any `--` */
function jsonAsked(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end === -1 ? argv : argv.slice(0, end)).includes('--json');
}

export default class AgentpayHelp extends Help {
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
