/**
 * Signup (public, on the strict per-IP rate limit): start, verify, resend, status.
 * Shapes are in docs/api/tenancy.md; the work is in src/domain/tenancy/signup.ts.
 */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import { strictRateLimit } from '../plugins/rate-limit.js';
import { Closed, SignupBody, SignupParams, SignupRecord, SignupResendBody as ResendBody, SignupStarted, SignupVerified, SignupVerifyBody as VerifyBody } from 'agentpay-sdk/contract';

export default async function signupRoutes(app: FastifyInstance) {
  const { signup, config } = app.services;
  const strict = { public: true, rateLimit: strictRateLimit(config) };

  app.post<{ Body: Static<typeof SignupBody> }>('/v1/signup', { config: { ...strict, errors: ['CONFLICT'] }, schema: { summary: 'Sign up a workspace or provider: mails a token', body: SignupBody, response: { 200: SignupStarted } } }, async (request) =>
    signup.start(request.body),
  );

  app.post<{ Body: Static<typeof VerifyBody> }>('/v1/signup/verify', { config: { ...strict, errors: ['CONFLICT', 'NOT_FOUND'] }, schema: { summary: 'Verify a signup: makes the tenant and its first key', body: VerifyBody, response: { 200: SignupVerified } } }, async (request) =>
    signup.verify(request.body),
  );

  app.post<{ Body: Static<typeof ResendBody> }>('/v1/signup/resend', { config: { ...strict, errors: ['CONFLICT', 'NOT_FOUND'] }, schema: { summary: 'Mail the signup token again', body: ResendBody, response: { 200: SignupStarted } } }, async (request) =>
    signup.resend(request.body),
  );

  app.get<{ Params: Static<typeof SignupParams> }>('/v1/signup/:id', { config: strict, schema: { summary: 'A signup and its status', params: SignupParams, response: { 200: Closed({ signup: SignupRecord }) } } }, async (request) =>
    signup.get(request.params.id),
  );
}
