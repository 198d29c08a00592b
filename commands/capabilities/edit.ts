import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../src/cli/base-command.js';
import { capabilityEditText, editCapability } from '../../src/cli/capabilities.js';

export default class CapabilitiesEdit extends BaseCommand<typeof CapabilitiesEdit> {
  static override summary = 'Edit a live capability: send only what changes (prints `changed`)';
  static override description = [
    'A new price applies from the next price quote. A schema change publishes a new version. The address,',
    'protocol and tool name cannot change: publish a new capability and deprecate this one instead.',
    'A new metered price (--unit, --unit-price, --max-units) sets the price to --unit-price × --max-units;',
    '--flat goes back to charging the price flat per call.',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> capabilities edit cap_123 --price 150',
    '<%= config.bin %> capabilities edit cap_123 --description "Faster summaries" --tags summarization,fast',
    '<%= config.bin %> capabilities edit cap_123 --schema-file schema.json --version 2',
    '<%= config.bin %> capabilities edit cap_123 --unit token --unit-price 3 --max-units 2000',
  ];
  static override args = { id: Args.string({ description: 'capability id', required: true }) };
  static override flags = {
    name: Flags.string({ description: 'new name' }),
    description: Flags.string({ description: 'new description' }),
    category: Flags.string({ description: 'new category' }),
    tags: Flags.string({ description: 'comma-separated tags (replace the current ones)' }),
    price: Flags.string({ description: 'new price per call in integer minor units, e.g. 150 for 1.50 USD' }),
    unit: Flags.string({ description: 'new metered price: what is counted, e.g. token (with --unit-price and --max-units)', dependsOn: ['unit-price', 'max-units'] }),
    'unit-price': Flags.string({ description: 'new metered price: the price of one unit in integer minor units', dependsOn: ['unit', 'max-units'] }),
    'max-units': Flags.string({ description: 'new metered price: the most units one call may use', dependsOn: ['unit', 'unit-price'] }),
    flat: Flags.boolean({ description: 'drop the metered price: charge the price flat per call again', exclusive: ['unit'] }),
    'schema-file': Flags.string({ description: 'new JSON Schema file (publishes a new version)' }),
    'latency-p50-ms': Flags.integer({ description: 'advertised median latency in milliseconds', min: 0 }),
    version: Flags.string({ description: 'label of the version a schema edit publishes', dependsOn: ['schema-file'] }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const edit = await editCapability(this.client(), this.args.id, {
      name: f.name,
      description: f.description,
      category: f.category,
      tags: f.tags,
      price: f.price,
      schemaFile: f['schema-file'],
      latencyP50Ms: f['latency-p50-ms'],
      version: f.version,
      metering: { unit: f.unit, unitPrice: f['unit-price'], maxUnits: f['max-units'] },
      flat: f.flat,
    });
    this.out.result(edit, () => capabilityEditText(edit));
  }
}
