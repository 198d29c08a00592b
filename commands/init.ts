import { Args, Flags } from '@oclif/core';
import { AgentpayCommand } from '../src/cli/base-command.js';
import { CLI_DEPENDENCY_ENV, init, initText, LOCAL_ENV, SDK_DEPENDENCY_ENV } from '../src/cli/init.js';

export default class Init extends AgentpayCommand<typeof Init> {
  static override summary = 'Create a seller project from a template: a paid REST endpoint (rest) or paid MCP tools (mcp)';
  static override description = [[
    'Renders the template into DIR with its own README, tests, CI script and an end-to-end purchase script',
    '(npm run e2e). Missing values (template, directory, name, price, category, description) are asked for on a',
    'terminal; every one is also a flag, and --yes takes the defaults for what was not given. A directory that is',
    'not empty is refused, and nothing written, unless --force (files of the template then overwrite files with the',
    'same names). Needs no gateway.',
  ].join(' '), [
    'The project depends on agentpay-sdk (dependencies) and agentpay-cli (devDependencies: `npx agentpay dev`,',
    '`npm run e2e`). Run from an installed agentpay-cli, init writes version ranges of the versions it runs with',
    '(^0.1.0); run from a checkout of agentpay (a clone), it links that checkout (file:<clone>/packages/sdk and',
    `file:<clone>), so the project uses your working copy. --local PATH (env ${LOCAL_ENV}) links the checkout at PATH;`,
    '--registry writes version ranges even from a checkout.',
  ].join(' ')].join('\n\n');
  static override examples = [
    '<%= config.bin %> init',
    '<%= config.bin %> init weather-api --template rest --price 25 --category weather --description "Forecasts by city"',
    '<%= config.bin %> init pdf-tools --template mcp --yes',
    '<%= config.bin %> init my-seller --template rest --yes --local ~/src/agentpay',
  ];
  static override args = { dir: Args.string({ description: 'directory of the new project (created if missing)' }) };
  static override flags = {
    template: Flags.string({ char: 't', description: 'template: rest or mcp' }),
    name: Flags.string({ description: 'npm package name, also the capability name [default: the directory name]' }),
    price: Flags.string({ description: 'price per call in integer minor units, e.g. 100 for 1.00 USD' }),
    category: Flags.string({ description: 'capability category (exact match in search)' }),
    description: Flags.string({ description: 'what it does: shown to buyers and searched' }),
    force: Flags.boolean({ description: 'write into a directory that is not empty' }),
    yes: Flags.boolean({ char: 'y', description: 'take the defaults for what was not given; never prompt' }),
    local: Flags.string({ description: `link a checkout of agentpay at PATH (file:) instead of registry versions [env ${LOCAL_ENV}]`, helpValue: 'PATH', exclusive: ['registry'] }),
    registry: Flags.boolean({ description: 'depend on registry version ranges even when run from a checkout' }),
    'sdk-dependency': Flags.string({ hidden: true, description: `exact npm spec of agentpay-sdk in package.json, e.g. a packed tarball (env ${SDK_DEPENDENCY_ENV})` }),
    'cli-dependency': Flags.string({ hidden: true, description: `exact npm spec of agentpay-cli in package.json (env ${CLI_DEPENDENCY_ENV})` }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const result = await init({
      dir: this.args.dir,
      template: f.template,
      name: f.name,
      price: f.price,
      category: f.category,
      description: f.description,
      local: f.local,
      registry: f.registry,
      sdkDependency: f['sdk-dependency'],
      cliDependency: f['cli-dependency'],
      force: f.force,
      yes: f.yes,
    });
    this.out.result(result, () => initText(result));
  }
}
