import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../src/cli/base-command.js';
import { Output } from '../src/cli/output.js';

export default class Demo extends AgentpayCommand<typeof Demo> {
  static override summary = 'Watch the whole marketplace work: sandbox gateway, seller, buyer';
  static override description = [
    'Starts a sandbox gateway in a temp dir, a sample seller on 127.0.0.1 with the seller middleware, and a buyer agent',
    'with the buyer SDK. The agent searches the market, buys three calls (the third fails at the seller and is refunded),',
    'then the demo shows the receipts, the ledger movement of one purchase (buyer -100, seller +97, platform +3) and the',
    'balances. Progress goes to stderr (a spinner on a terminal); the report goes to stdout as text, or as JSON with',
    '--json. Nothing is left running, and the temp dir is removed unless --keep.',
  ].join(' ');
  static override examples = ['<%= config.bin %> demo', '<%= config.bin %> demo --json', '<%= config.bin %> demo --keep'];
  static override flags = {
    keep: Flags.boolean({ description: 'keep the temp dir (database, keys, certificate) to look around afterwards', default: false }),
  };

  async run(): Promise<void> {
    // a report for reading: text even when piped (CI logs), JSON only when asked for; a failure
    // likewise stays on stderr unless --json
    this.out = new Output(Boolean(this.flags.json));
    // the gateway is loaded only when this command runs, so other commands start fast
    const { runDemo } = await import('../src/cli/demo/run.js');
    const { demoReport } = await import('../src/cli/demo/report.js');
    const { Steps } = await import('../src/cli/demo/steps.js');
    const summary = await runDemo({ steps: new Steps(), keep: this.flags.keep });
    this.out.result(summary, () => demoReport(summary));
  }
}
