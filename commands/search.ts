import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../src/cli/base-command.js';
import { PROTOCOLS } from '../src/cli/capabilities.js';
import { search, searchTable } from '../src/cli/search.js';

export default class Search extends BaseCommand<typeof Search> {
  static override summary = 'Search the marketplace: active capabilities of verified sellers, best first';
  static override description = 'Every filter is optional. --max-price is integer minor units (150 = 1.50 USD).';
  static override examples = [
    '<%= config.bin %> search "summarize a document"',
    '<%= config.bin %> search weather --protocol mcp --max-price 10 --limit 5',
    '<%= config.bin %> search --category text --max-latency 1000 --json',
  ];
  static override args = { query: Args.string({ description: 'what you need, in plain words' }) };
  static override flags = {
    'max-price': Flags.string({ description: 'at most this price per call, in integer minor units' }),
    protocol: Flags.option({ options: PROTOCOLS, description: 'only rest or only mcp' })(),
    category: Flags.string({ description: 'exact category' }),
    'max-latency': Flags.integer({ description: 'ceiling on advertised median latency, in milliseconds', min: 0 }),
    limit: Flags.integer({ description: 'at most this many results, 1 to 100 (default 20)', min: 1, max: 100 }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const results = await search(this.client(), {
      query: this.args.query,
      maxPrice: f['max-price'],
      protocol: f.protocol,
      category: f.category,
      maxLatencyMs: f['max-latency'],
      limit: f.limit,
    });
    this.out.result({ results }, () => searchTable(results));
  }
}
