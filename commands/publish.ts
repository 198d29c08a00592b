import { Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { PROTOCOLS, publishCapability, publishedText } from '../src/cli/capabilities.js';

export default class Publish extends BaseCommand<typeof Publish> {
  static override summary = 'Publish a priced capability (provider key): a REST endpoint or an MCP tool';
  static override description = [
    'Takes the capability from flags, from a JSON file (--file; flags override its fields), or both. Missing',
    'required values are asked for on a terminal; every one is also a flag. Prices are integer minor units:',
    '--price 150 is 1.50 USD per call; "1.50" is refused, never rounded. The address is either --endpoint URL or',
    'an npx package pinned to an exact version (--package-args "-y @acme/tool@1.2.3" --package-version 1.2.3);',
    'it never changes for a capability id. Prints the capability id and the version hash.',
    'A metered price (--unit, --unit-price, --max-units) charges each call the units it used, up to --max-units:',
    'the buyer authorizes --unit-price × --max-units, which is the price (--price may be left out, or must agree).',
  ].join('\n');
  static override examples = [
    '<%= config.bin %> publish --name "Summarize text" --description "Summarizes a document" --protocol rest --price 25 --category text --endpoint https://summarize.example.com/v1/summarize --tags summarization,nlp --as provider',
    '<%= config.bin %> publish --file fixtures/capabilities/rest-summarize.json --as provider',
    '<%= config.bin %> publish --name "Summarize text" --description "Summaries, priced per token" --protocol rest --unit token --unit-price 2 --max-units 5000 --category text --endpoint https://summarize.example.com/v1/summarize --as provider',
    '<%= config.bin %> publish --file fixtures/capabilities/mcp-weather.json --price 7 --as provider',
    '<%= config.bin %> publish --name "PDF tools" --description "Extract PDF text" --protocol mcp --tool-name extract_pdf_text --price 10 --category documents --package-args="-y @example/pdf-tools-mcp@2.4.1" --package-version 2.4.1 --as provider',
  ];
  static override flags = {
    file: Flags.string({ description: 'capability JSON (the body of POST /v1/capabilities); flags override its fields' }),
    name: Flags.string({ description: 'name shown in discovery' }),
    description: Flags.string({ description: 'what it does; searched and ranked on' }),
    protocol: Flags.option({ options: PROTOCOLS, description: 'rest (an HTTP endpoint) or mcp (an MCP tool)' })(),
    price: Flags.string({ description: 'price per call in integer minor units, e.g. 150 for 1.50 USD (metered: the most a call can cost, --unit-price × --max-units)' }),
    unit: Flags.string({ description: 'metered price: what is counted, e.g. token, row, second (with --unit-price and --max-units)', dependsOn: ['unit-price', 'max-units'] }),
    'unit-price': Flags.string({ description: 'metered price: the price of one unit in integer minor units', dependsOn: ['unit', 'max-units'] }),
    'max-units': Flags.string({ description: 'metered price: the most units one call may use', dependsOn: ['unit', 'unit-price'] }),
    category: Flags.string({ description: 'category (exact match in search)' }),
    // The address is --endpoint, or a package: --package-args with --package-version (and optionally
    // --package-command). Declared in this order so that help reads
    // [--endpoint | --package-args --package-version]; --endpoint with --package-command alone is
    // refused by buildPublishInput (usage error), as before.
    'package-command': Flags.string({ description: 'launcher of a package address (only npx is approved)' }),
    'package-args': Flags.string({
      description: 'npx arguments separated by spaces, pinning an exact version, e.g. "-y @acme/tool@1.2.3" (with --package-version)',
      dependsOn: ['package-version'],
      exclusive: ['endpoint'],
    }),
    'package-version': Flags.string({
      description: 'the exact package version the args pin, e.g. 1.2.3 (with --package-args)',
      dependsOn: ['package-args'],
      exclusive: ['endpoint'],
    }),
    endpoint: Flags.string({ description: 'URL buyers call', exclusive: ['package-args'] }),
    'tool-name': Flags.string({ description: 'MCP tool name (required for mcp, refused for rest)' }),
    tags: Flags.string({ description: 'comma-separated tags, e.g. summarization,nlp' }),
    'schema-file': Flags.string({ description: 'JSON Schema file of the request body or tool arguments' }),
    'latency-p50-ms': Flags.integer({ description: 'advertised median latency in milliseconds', min: 0 }),
    version: Flags.string({ description: 'version label (default 1)' }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const published = await publishCapability(this.client(), {
      file: f.file,
      name: f.name,
      description: f.description,
      protocol: f.protocol,
      price: f.price,
      category: f.category,
      endpoint: f.endpoint,
      packageCommand: f['package-command'],
      packageArgs: f['package-args'],
      packageVersion: f['package-version'],
      toolName: f['tool-name'],
      tags: f.tags,
      schemaFile: f['schema-file'],
      latencyP50Ms: f['latency-p50-ms'],
      version: f.version,
      metering: { unit: f.unit, unitPrice: f['unit-price'], maxUnits: f['max-units'] },
    });
    this.out.result(published, () => publishedText(published));
  }
}
