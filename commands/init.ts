import { Args, Flags } from '@oclif/core';
import { AgentpayCommand } from '../src/cli/base-command.js';
import { DEPENDENCY_ENV, init, initText } from '../src/cli/init.js';

export default class Init extends AgentpayCommand<typeof Init> {
  static override summary = 'Create a seller project from a template: a paid REST endpoint (rest) or paid MCP tools (mcp)';
  static override description = [
    'Renders the template into DIR with its own README, tests, CI script and an end-to-end purchase script',
    '(npm run e2e). Missing values (template, directory, name, price, category, description) are asked for on a',
    'terminal; every one is also a flag, and --yes takes the defaults for what was not given. A directory that is',
    'not empty is refused, and nothing written, unless --force (files of the template then overwrite files with the',
    'same names). Needs no gateway.',
  ].join(' ');
  static override examples = [
    '<%= config.bin %> init',
    '<%= config.bin %> init weather-api --template rest --price 25 --category weather --description "Forecasts by city"',
    '<%= config.bin %> init pdf-tools --template mcp --yes',
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
    'agentpay-dependency': Flags.string({ hidden: true, description: `version range of agentpay in package.json (env ${DEPENDENCY_ENV})` }),
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
      agentpayDependency: f['agentpay-dependency'],
      force: f.force,
      yes: f.yes,
    });
    this.out.result(result, () => initText(result));
  }
}
