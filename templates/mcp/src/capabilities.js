/**
 * What is published on the gateway (POST /v1/capabilities): one capability per paid tool,
 * protocol "mcp" with its tool name, at a price in integer minor units ("100" is 1.00 USD).
 */
import { z } from 'zod';
import { paidTools } from './tools.js';

export const PRICE_MINOR = "{{priceMinor}}";
export const CATEGORY = "{{category}}";
export const SERVER_NAME = "{{name}}";

/**
 * The publish body of one paid tool. `where` is either `{endpoint: 'https://…/mcp'}` (the
 * streamable HTTP endpoint) or `{address: {kind: 'package', command: 'npx', args, version}}`
 * (buyers run the stdio server themselves; see README).
 */
export function publishInput(toolName, where) {
  const tool = paidTools[toolName];
  if (!tool) throw new Error(`no paid tool named ${toolName}; the paid tools are ${Object.keys(paidTools).join(', ')}`);
  return {
    name: `${SERVER_NAME}: ${toolName}`,
    description: tool.description,
    protocol: 'mcp',
    toolName,
    priceMinor: PRICE_MINOR,
    category: CATEGORY,
    // the input as JSON Schema, shown to buyers in discovery
    schema: z.toJSONSchema(z.object(tool.inputSchema), { io: 'input' }),
    ...where,
  };
}

/** The package address of this project at `version` (`npx -y <name>@<version>`). */
export function packageAddress(name, version) {
  return { kind: 'package', command: 'npx', args: ['-y', `${name}@${version}`], version };
}
