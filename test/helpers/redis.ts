/**
 * Redis for tests: the one of AGENTPAY_TEST_REDIS_URL (.ci/run sets it), each test under a random
 * key prefix of its own. Without the variable the Redis tests are skipped, so `npm test` needs no
 * server on a laptop; under CI (the CI variable set) they always run, on loopback by default.
 */
export const TEST_REDIS_URL = process.env.AGENTPAY_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

export const redisEnabled = (): boolean => Boolean(process.env.AGENTPAY_TEST_REDIS_URL || process.env.CI);
