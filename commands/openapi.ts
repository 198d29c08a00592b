import { Flags } from '@oclif/core';
import { AgentpayCommand } from '../src/cli/base-command.js';

export default class OpenApi extends AgentpayCommand<typeof OpenApi> {
  static override summary = "Print the gateway API's OpenAPI 3.1 document (no gateway needed)";
  static override description = [
    'The same document a gateway serves at GET /openapi.json: every route with its request and response schemas,',
    'its scope (x-scope) and its error codes per status, generated from the routes of this version of agentpay.',
    'Nothing is started or contacted. Printed on stdout, or written to --output FILE.',
  ].join(' ');
  static override examples = ['<%= config.bin %> openapi > openapi.json', '<%= config.bin %> openapi --output openapi.json'];
  static override flags = {
    output: Flags.string({ char: 'o', description: 'write the document to this file instead of stdout' }),
  };

  async run(): Promise<void> {
    const { openapiDocument } = await import('../src/gateway/openapi-document.js');
    const { writeFileSync } = await import('node:fs');
    const { resolve } = await import('node:path');
    const doc = await openapiDocument();
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    const output = this.flags.output;
    if (!output) {
      process.stdout.write(text);
      return;
    }
    const path = resolve(output);
    writeFileSync(path, text);
    const paths = Object.keys((doc.paths ?? {}) as object).length;
    this.out.result({ path, openapi: doc.openapi, paths }, () => `wrote the OpenAPI ${String(doc.openapi)} document (${paths} paths) to ${path}`);
  }
}
