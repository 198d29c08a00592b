import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../../src/cli/base-command.js';
import { ENV_ROLES, SHELLS } from '../../src/cli/dev-env.js';
import { Output } from '../../src/cli/output.js';

export default class DevEnv extends AgentpayCommand<typeof DevEnv> {
  static override summary = 'Print the settings a seller or buyer needs for the running dev gateway, as shell exports';
  static override description = [
    'Reads the running `agentpay dev` gateway of the nearest .agentpay (here or in a parent directory, as git finds .git;',
    'or --data-dir) and prints the variables of docs/configuration.md that another terminal needs.',
    '--role seller: AGENTPAY_GATEWAY_URL, AGENTPAY_CA and AGENTPAY_API_KEY (the dev provider key).',
    '--role buyer: the same with the dev workspace key, plus AGENTPAY_WALLET_ID and AGENTPAY_PRIVATE_KEY_FILE, a dev agent',
    'wallet and its private key (DATA_DIR/dev-agent.pem, 0600), made on first use and reused after.',
    '\n\nUse it as  eval "$(npx agentpay dev env)"  (fish: npx agentpay dev env --shell fish | source; PowerShell:',
    'npx agentpay dev env --shell powershell | Invoke-Expression). The output holds API keys, printed because you asked:',
    'keep it out of logs and issues. On an error nothing is written to stdout (unless --json), so eval runs nothing.',
  ].join(' ');
  static override examples = [
    'eval "$(<%= config.bin %> dev env)"',
    'eval "$(<%= config.bin %> dev env --role seller)"',
    '<%= config.bin %> dev env --role buyer --json',
    '<%= config.bin %> dev env --shell fish | source',
  ];
  static override baseFlags = { json: Flags.boolean({ description: 'print {role, dataDir, env} as JSON instead of exports' }) };
  static override flags = {
    role: Flags.option({ options: ENV_ROLES, description: 'seller: the dev provider key; buyer: the dev workspace key and an agent wallet', default: 'buyer' as const })(),
    shell: Flags.option({ options: SHELLS, description: 'syntax of the exports: sh (bash, zsh), fish or powershell', default: 'sh' as const })(),
    'data-dir': Flags.string({ description: "the dev gateway's data dir [default: the nearest .agentpay, here or in a parent directory]" }),
  };

  public override async init(): Promise<void> {
    await super.init();
    // shell exports by default even into a pipe (that is the point: eval "$(…)"); JSON only when asked
    this.out = new Output(Boolean(this.flags.json));
  }

  async run(): Promise<void> {
    const { devEnv, envDataDir, exportLines } = await import('../../src/cli/dev-env.js');
    const dataDir = envDataDir(this.flags['data-dir']);
    const env = await devEnv(dataDir, this.flags.role);
    if (this.flags.json) {
      process.stdout.write(JSON.stringify({ role: this.flags.role, dataDir, env }) + '\n');
      return;
    }
    process.stdout.write(exportLines(env, this.flags.shell) + '\n');
    if (process.stdout.isTTY) this.out.note(`# to set these in this shell: eval "$(npx agentpay dev env${this.flags.role === 'buyer' ? '' : ' --role seller'})"`);
  }

  protected override async catch(err: Error & { exitCode?: number }): Promise<unknown> {
    // an error must not reach eval "$(…)" as text on stdout: the envelope only with --json
    this.out ??= new Output(this.argv.includes('--json'));
    return super.catch(err);
  }
}
