/**
 * Signup (public, on the strict per-IP rate limit): start, verify, resend, status.
 * Shapes are in docs/api/tenancy.md; the work is in src/domain/tenancy/signup.ts.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { strictRateLimit } from '../plugins/rate-limit.js';
import { StringEnum } from '../schemas.js';
import { MAX_PASSWORD_LENGTH } from '../../domain/tenancy/passwords.js';
import { OpenRecord } from 'agentpay-sdk/contract';

const SignupBody = Type.Object(
  {
    kind: StringEnum(['workspace', 'provider'] as const),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ maxLength: MAX_PASSWORD_LENGTH }),
    website: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const SignupId = Type.String({ minLength: 1, maxLength: 100 });
const VerifyBody = Type.Object({ signupId: SignupId, token: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
const ResendBody = Type.Object({ signupId: SignupId }, { additionalProperties: false });
const SignupParams = Type.Object({ id: SignupId });

export default async function signupRoutes(app: FastifyInstance) {
  const { signup, config } = app.services;
  const strict = { public: true, rateLimit: strictRateLimit(config) };

  app.post<{ Body: Static<typeof SignupBody> }>('/v1/signup', { config: { ...strict, errors: ['CONFLICT'] }, schema: { summary: 'Sign up a workspace or provider: mails a token', body: SignupBody, response: { 200: OpenRecord('the signup (docs/api/tenancy.md)') } } }, async (request) =>
    signup.start(request.body),
  );

  app.post<{ Body: Static<typeof VerifyBody> }>('/v1/signup/verify', { config: { ...strict, errors: ['CONFLICT', 'NOT_FOUND'] }, schema: { summary: 'Verify a signup: makes the tenant and its first key', body: VerifyBody, response: { 200: OpenRecord('the tenant and its key (docs/api/tenancy.md)') } } }, async (request) =>
    signup.verify(request.body),
  );

  app.post<{ Body: Static<typeof ResendBody> }>('/v1/signup/resend', { config: { ...strict, errors: ['CONFLICT', 'NOT_FOUND'] }, schema: { summary: 'Mail the signup token again', body: ResendBody, response: { 200: OpenRecord('the signup (docs/api/tenancy.md)') } } }, async (request) =>
    signup.resend(request.body),
  );

  app.get<{ Params: Static<typeof SignupParams> }>('/v1/signup/:id', { config: strict, schema: { summary: 'A signup and its status', params: SignupParams, response: { 200: OpenRecord('the signup (docs/api/tenancy.md)') } } }, async (request) =>
    signup.get(request.params.id),
  );
}
