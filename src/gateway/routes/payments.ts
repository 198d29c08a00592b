/**
 * The payment protocol routes the seller middleware calls (docs/protocol.md). All
 * take a provider key with payments:write and act on the caller's own capabilities
 * and transactions only. `/v1/x402/batch` carries several of the four operations in
 * one request, each answered with the status and body its own route would give.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../../core/errors.js';
import { Type, type Static } from '@sinclair/typebox';
import type { Principal } from '../../domain/tenancy/api-keys.js';
import type { PaymentService } from '../../domain/payments/service.js';
import { principal } from '../plugins/auth.js';
import type { PaymentOperation } from '../plugins/rate-limit.js';
import { errorResponse, validationToAppError } from '../plugins/errors.js';
import { compileBodyValidator } from '../plugins/validation.js';
import {
  Authorization, AuthorizeBody, BatchBody, ChallengeBody, Closed, CompleteBody, ErrorEnvelope, FailBody, PriceChallenge as Challenge, Receipt, Replay,
} from 'agentpay-sdk/contract';

const BUYING = ['CAPABILITY_NOT_FOUND', 'PROVIDER_NOT_FOUND', 'WALLET_NOT_FOUND', 'INSUFFICIENT_FUNDS', 'POLICY_DENIED', 'APPROVAL_REQUIRED', 'WALLET_FROZEN', 'WALLET_PROVIDER_PAUSED', 'CHALLENGE_EXPIRED', 'REPLAY_DETECTED', 'IDEMPOTENCY_KEY_REUSED', 'IDEMPOTENCY_IN_PROGRESS', 'CONFLICT'] as const;
const RESOLVING = ['NOT_FOUND', 'CONFLICT'] as const;
/** complete also refuses a metered call's units that cost more than was authorized */
const COMPLETING = [...RESOLVING, 'USAGE_ABOVE_MAXIMUM'] as const;


type Operation = Static<typeof BatchBody>['operations'][number];
interface OperationResult { status: number; body: unknown }

/** Each operation's own schema: its route's body with `op`. */
const withOp = <T extends ReturnType<typeof Type.Object>>(body: T, op: string) =>
  compileBodyValidator(Type.Object({ op: Type.Literal(op), ...body.properties }, { additionalProperties: false }));

/** One operation of a batch, answered as its route would answer it; never throws. */
function operationRunner(payments: PaymentService) {
  const validators = {
    challenge: withOp(ChallengeBody, 'challenge'),
    authorize: withOp(AuthorizeBody, 'authorize'),
    complete: withOp(CompleteBody, 'complete'),
    fail: withOp(FailBody, 'fail'),
  };
  const perform = async (p: Principal, op: Operation): Promise<unknown> => {
    const { op: kind, ...body } = op as Operation & Record<string, unknown>;
    switch (kind) {
      case 'challenge': return { challenge: await payments.challenge(p, (body as Static<typeof ChallengeBody>).capabilityId) };
      case 'authorize': return payments.authorize(p, body as Static<typeof AuthorizeBody>);
      case 'complete': return { receipt: await payments.complete(p, body as Static<typeof CompleteBody>) };
      case 'fail': return { receipt: await payments.fail(p, body as Static<typeof FailBody>) };
    }
  };
  return async (p: Principal, op: Operation, log: FastifyBaseLogger): Promise<OperationResult> => {
    const validate = validators[op.op];
    if (!validate(op)) {
      return errorResponse(validationToAppError(Object.assign(new Error('invalid operation'), { validation: validate.errors ?? [], validationContext: 'body' }) as never), log);
    }
    try {
      return { status: 200, body: await perform(p, op) };
    } catch (e) {
      return errorResponse(e, log);
    }
  };
}

export default async function paymentRoutes(app: FastifyInstance) {
  const { payments } = app.services;
  const config = { scope: 'payments:write' } as const;

  // a payment operation counts on its own limit (per key and operation), not on the general one
  const paymentOp = (op: PaymentOperation, errors: readonly ErrorCode[]) => ({ config: { ...config, rateLimit: false as const, errors }, onRequest: app.paymentLimits.hook(op) });

  app.post<{ Body: Static<typeof ChallengeBody> }>('/v1/x402/challenge', { ...paymentOp('challenge', ['CAPABILITY_NOT_FOUND', 'PROVIDER_NOT_FOUND', 'CONFLICT']), schema: { summary: 'A signed price challenge for a capability (the seller)', body: ChallengeBody, response: { 200: Closed({ challenge: Challenge }) } } }, async (request) => ({
    challenge: await payments.challenge(principal(request), request.body.capabilityId),
  }));

  app.post<{ Body: Static<typeof AuthorizeBody> }>('/v1/x402/authorize', { ...paymentOp('authorize', BUYING), schema: { summary: "Authorize a buyer's signed payment: holds the price", body: AuthorizeBody, response: { 200: Type.Union([Authorization, Replay]) } } }, async (request) =>
    payments.authorize(principal(request), request.body),
  );

  app.post<{ Body: Static<typeof CompleteBody> }>('/v1/x402/complete', { ...paymentOp('complete', COMPLETING), schema: { summary: 'Complete a paid call: settles and signs the receipt', body: CompleteBody, response: { 200: Closed({ receipt: Receipt }) } } }, async (request) => ({
    receipt: await payments.complete(principal(request), request.body),
  }));

  app.post<{ Body: Static<typeof FailBody> }>('/v1/x402/fail', { ...paymentOp('fail', RESOLVING), schema: { summary: 'Fail a paid call: the hold is released to the buyer', body: FailBody, response: { 200: Closed({ receipt: Receipt }) } } }, async (request) => ({
    receipt: await payments.fail(principal(request), request.body),
  }));

  const run = operationRunner(payments);
  // All operations start at once: their database transactions share commits (group commit),
  // and the request's TLS, parsing and authentication are paid once for all of them.
  // The batch is one request on the general limit; each of its operations counts on that
  // operation's payment limit. One that does not fit what is left of a window is refused whole,
  // before any operation is counted or run, so a refused batch changes nothing: the client may
  // resend it, smaller or later.
  app.post<{ Body: Static<typeof BatchBody> }>('/v1/x402/batch', { config: { ...config, errors: [...BUYING, ...RESOLVING] }, schema: { summary: 'Several payment operations in one request, each answered as its route would', body: BatchBody, response: { 200: Closed({ results: Type.Array(Closed({ status: Type.Integer(), body: Type.Union([Closed({ challenge: Challenge }), Closed({ receipt: Receipt }), ErrorEnvelope, Authorization, Replay]) })) }) } } }, async (request, reply) => {
    const count: Record<string, number> = {};
    for (const op of request.body.operations) count[op.op] = (count[op.op] ?? 0) + 1;
    await app.paymentLimits.takeBatch(request, reply, count);
    return { results: await Promise.all(request.body.operations.map((op) => run(principal(request), op, request.log))) };
  });
}
