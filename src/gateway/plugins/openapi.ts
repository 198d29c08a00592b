/**
 * The OpenAPI 3.1 document, generated from the routes' schemas (@fastify/swagger): each
 * operation has its request schemas, its success answer and one error envelope per status with
 * the codes it can answer (plugins/responses.ts), its scope as `x-scope` and security, and the
 * examples its schemas carry. Served without a key at `GET /openapi.json`; `agentpay openapi`
 * prints the same document without a running gateway (src/gateway/openapi-document.ts).
 * The contract's shapes are named in `components.schemas` and referred to (openapi-components.ts).
 * Registered after responses.ts and before the routes (its onRoute hook collects them).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import swagger from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { packageRoot } from '../../paths.js';
import { Open } from 'agentpay-sdk/contract';
import { Type } from '@sinclair/typebox';
import { nameSchemas } from '../openapi-components.js';
import { webhookEvents } from '../openapi-webhooks.js';

export const OPENAPI_PATH = '/openapi.json';

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** Groups operations by the first path segment after /v1 (wallets, x402, policies, …). */
function tagOf(url: string): string {
  const seg = url.split('/').filter(Boolean);
  return seg[0] === 'v1' ? (seg[1] ?? 'v1') : (seg[0] ?? 'root').replace(/\.json$/, '');
}

export default fp(async function openapi(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'agentpay gateway API',
        version: packageVersion(),
        description:
          'Pay-per-call gateway over HTTP 402. Amounts are strings of integer minor units. Every error answer is `{error: {code, message, details}}`: ' +
          'handle errors by `code` (docs/api/conventions.md). Each operation names its scope in `x-scope` (`public`: no key; `any valid key`).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'an agentpay API key (ap_w_…, ap_p_…, ap_o_…)' } } },
      // the events POSTed to webhook endpoints (../openapi-webhooks.ts)
      webhooks: webhookEvents(),
    } as never,
    // the contract's shapes named in components.schemas and referred to (openapi-components.ts)
    transformObject: (d) => ('openapiObject' in d ? nameSchemas(d.openapiObject as Record<string, unknown>) : d.swaggerObject) as never,
    transform: ({ schema, url }) => {
      const s = (schema ?? {}) as Record<string, unknown>;
      return { schema: { ...s, tags: (s.tags as string[] | undefined) ?? [tagOf(url)] } as never, url };
    },
  });

  app.get(
    OPENAPI_PATH,
    {
      config: { public: true },
      schema: {
        summary: 'This document: the OpenAPI 3.1 description of the API',
        response: { 200: Open({ openapi: Type.String({ examples: ['3.1.0'] }), info: Open({}), paths: Open({}) }) },
      },
    },
    async () => app.swagger(),
  );
});
