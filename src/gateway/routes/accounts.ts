/**
 * Account routes (public, on the strict per-IP rate limit): login mints a 30-day key;
 * forgot/reset replace a password through a mailed one-time token.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { strictRateLimit } from '../plugins/rate-limit.js';
import { Accepted, ForgotPasswordBody as ForgotBody, LoginBody, LoginResult, ResetPasswordBody as ResetBody } from 'agentpay-sdk/contract';

export default async function accountRoutes(app: FastifyInstance) {
  const { accounts, config } = app.services;
  const strict = { public: true, rateLimit: strictRateLimit(config) };

  app.post<{ Body: Static<typeof LoginBody> }>('/v1/accounts/login', { config: { ...strict, errors: ['UNAUTHORIZED'] }, schema: { summary: 'Log in: a 30-day API key', body: LoginBody, response: { 200: LoginResult } } }, async (request) =>
    accounts.login(request.body),
  );

  app.post<{ Body: Static<typeof ForgotBody> }>('/v1/accounts/password/forgot', { config: strict, schema: { summary: 'Mail a password reset token', body: ForgotBody, response: { 200: Accepted } } }, async (request) =>
    accounts.forgotPassword(request.body),
  );

  app.post<{ Body: Static<typeof ResetBody> }>('/v1/accounts/password/reset', { config: { ...strict, errors: ['CONFLICT'] }, schema: { summary: 'Set a new password with a reset token', body: ResetBody, response: { 200: Accepted } } }, async (request) =>
    accounts.resetPassword(request.body),
  );
}
