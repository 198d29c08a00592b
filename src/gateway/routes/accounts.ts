/**
 * Account routes (public, on the strict per-IP rate limit): login mints a 30-day key;
 * forgot/reset replace a password through a mailed one-time token.
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from '@sinclair/typebox';
import { strictRateLimit } from '../plugins/rate-limit.js';
import { MAX_PASSWORD_LENGTH } from '../../domain/tenancy/passwords.js';
import { OpenRecord } from 'agentpay-sdk/contract';

const Email = Type.String({ minLength: 1, maxLength: 254 });
const Password = Type.String({ maxLength: MAX_PASSWORD_LENGTH });
const LoginBody = Type.Object({ email: Email, password: Password }, { additionalProperties: false });
const ForgotBody = Type.Object({ email: Email }, { additionalProperties: false });
const ResetBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }), password: Password }, { additionalProperties: false });

export default async function accountRoutes(app: FastifyInstance) {
  const { accounts, config } = app.services;
  const strict = { public: true, rateLimit: strictRateLimit(config) };

  app.post<{ Body: Static<typeof LoginBody> }>('/v1/accounts/login', { config: { ...strict, errors: ['UNAUTHORIZED'] }, schema: { summary: 'Log in: a 30-day API key', body: LoginBody, response: { 200: OpenRecord('the new key and its tenant (docs/api/tenancy.md)') } } }, async (request) =>
    accounts.login(request.body),
  );

  app.post<{ Body: Static<typeof ForgotBody> }>('/v1/accounts/password/forgot', { config: strict, schema: { summary: 'Mail a password reset token', body: ForgotBody, response: { 200: OpenRecord('accepted (docs/api/tenancy.md)') } } }, async (request) =>
    accounts.forgotPassword(request.body),
  );

  app.post<{ Body: Static<typeof ResetBody> }>('/v1/accounts/password/reset', { config: { ...strict, errors: ['CONFLICT'] }, schema: { summary: 'Set a new password with a reset token', body: ResetBody, response: { 200: OpenRecord('done (docs/api/tenancy.md)') } } }, async (request) =>
    accounts.resetPassword(request.body),
  );
}
