/**
 * The `rails` section of a gateway config file, when it names real adapters: which run,
 * their settings, and where their secrets come from (the environment or files of mode
 * 0600; never the config file itself). `checkRailsSection` refuses a bad section naming
 * the key; `buildRails` reads the secrets and builds the adapters, before anything
 * listens. docs/rails.md § Configuration.
 *
 *   "rails": {
 *     "stripe": { "topUps": true, "payouts": true, "payoutRails": ["ach"],
 *                 "secretKeyFile": "/etc/agentpay/stripe-secret-key",      // or STRIPE_SECRET_KEY
 *                 "webhookSecretFile": "/etc/agentpay/stripe-webhook" },   // or STRIPE_WEBHOOK_SECRET
 *     "usdc": { "chainId": 8453, "rpcUrl": "https://…", "priceFeed": "0x…", "confirmations": 10,
 *               "treasuryKeyFile": "/etc/agentpay/usdc-treasury-key",      // or AGENTPAY_USDC_TREASURY_KEY
 *               "depositMnemonicFile": "/etc/agentpay/usdc-deposit-seed" }, // or AGENTPAY_USDC_DEPOSIT_MNEMONIC
 *     "screening": { "ofacSdn": { "path": "/var/lib/agentpay/sdn.csv", "maxAgeMs": 172800000 } },
 *     "webhookToleranceMs": 300000, "pollIntervalMs": 15000, "reconcileIntervalMs": 300000
 *   }
 */
import { resolve } from 'node:path';
import type { Clock } from '../core/clock.js';
import { RailUnavailable, type RailAdapters, type ScreeningService } from '../domain/rails/adapters.js';
import type { RailsConfig } from '../domain/rails/config.js';
import { SANDBOX_SANCTIONED } from './sandbox/world.js';
import { OfacSdnScreening } from './screening/ofac-sdn.js';
import { stripeAdapters } from './stripe/adapters.js';
import { checkUsdcSection, usdcFromSection, type UsdcSection } from './usdc/config.js';
import { RailsConfigError, secret } from './secrets.js';

export { RailsConfigError, secret };

export interface StripeSection {
  topUps?: boolean;
  payouts?: boolean;
  payoutRails?: Array<'ach' | 'bank_transfer'>;
  /** a file holding the secret key (mode 0600); else STRIPE_SECRET_KEY */
  secretKeyFile?: string;
  /** a file holding the webhook signing secret (mode 0600); else STRIPE_WEBHOOK_SECRET */
  webhookSecretFile?: string;
  /** another API base (a local Stripe stand-in for tests): http(s)://host:port */
  apiUrl?: string;
  /** top-ups as Checkout Sessions (a hosted page) returning the payer to these URLs */
  checkout?: { successUrl: string; cancelUrl: string };
}

export interface RailsSection {
  stripe?: StripeSection;
  usdc?: UsdcSection;
  /** `sandbox`: the sandbox's test list (sandbox mode only) */
  screening?: 'sandbox' | { ofacSdn: { path: string; maxAgeMs?: number } };
  webhookToleranceMs?: number;
  pollIntervalMs?: number;
  reconcileIntervalMs?: number;
}

const TOP = ['stripe', 'usdc', 'screening', 'webhookToleranceMs', 'pollIntervalMs', 'reconcileIntervalMs'];
const STRIPE = ['topUps', 'payouts', 'payoutRails', 'secretKeyFile', 'webhookSecretFile', 'apiUrl', 'checkout'];
/** keys that would put a secret in the config file */
const INLINE_SECRETS = ['secretKey', 'webhookSecret', 'apiKey', 'key', 'secret'];

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
const isMs = (v: unknown) => Number.isSafeInteger(v) && (v as number) >= 0;

/** Refuses a section that is not a RailsSection, naming the key as `rails.<key>`. */
export function checkRailsSection(v: unknown): RailsSection {
  const bad = (key: string, problem: string, hint?: string) => new RailsConfigError(`rails.${key}`, `rails.${key} ${problem}`, hint);
  if (!isObject(v)) throw new RailsConfigError('rails', 'rails must be "sandbox", "none", or an object naming the adapters (stripe, screening)');
  for (const [k, val] of Object.entries(v)) {
    if (!TOP.includes(k)) throw bad(k, `is not a setting (known: ${TOP.join(', ')})`);
    if (k.endsWith('Ms') && !isMs(val)) throw bad(k, 'must be a non-negative integer of milliseconds');
  }
  if (v.stripe !== undefined) {
    if (!isObject(v.stripe)) throw bad('stripe', 'must be an object');
    for (const [k, val] of Object.entries(v.stripe)) {
      if (INLINE_SECRETS.includes(k)) {
        throw bad(`stripe.${k}`, 'is refused: secrets never go in the config file', 'set STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET in the environment, or name 0600 files with secretKeyFile and webhookSecretFile');
      }
      if (!STRIPE.includes(k)) throw bad(`stripe.${k}`, `is not a setting (known: ${STRIPE.join(', ')})`);
      if ((k === 'topUps' || k === 'payouts') && typeof val !== 'boolean') throw bad(`stripe.${k}`, 'must be true or false');
      if ((k === 'secretKeyFile' || k === 'webhookSecretFile' || k === 'apiUrl') && (typeof val !== 'string' || val === '')) throw bad(`stripe.${k}`, 'must be a non-empty string');
      if (k === 'payoutRails' && (!Array.isArray(val) || val.length === 0 || !val.every((r) => r === 'ach' || r === 'bank_transfer'))) {
        throw bad('stripe.payoutRails', 'must be a non-empty list of "ach" and "bank_transfer"');
      }
      if (k === 'apiUrl' && !/^https?:\/\/[^/:]+(:\d+)?\/?$/.test(val as string)) throw bad('stripe.apiUrl', 'must be http(s)://host[:port]');
      if (k === 'checkout') {
        const c = val as Record<string, unknown>;
        const url = (x: unknown) => typeof x === 'string' && /^https:\/\/\S+$/.test(x);
        if (!isObject(c) || Object.keys(c).sort().join() !== 'cancelUrl,successUrl' || !url(c.successUrl) || !url(c.cancelUrl)) {
          throw bad('stripe.checkout', 'must be {"successUrl": "https://…", "cancelUrl": "https://…"}');
        }
      }
    }
  }
  if (v.usdc !== undefined) checkUsdcSection(v.usdc, bad);
  if (v.screening !== undefined && v.screening !== 'sandbox') {
    const s = v.screening;
    const o = isObject(s) ? s.ofacSdn : undefined;
    if (!isObject(s) || Object.keys(s).join() !== 'ofacSdn' || !isObject(o)) throw bad('screening', 'must be "sandbox" or {"ofacSdn": {"path": "…/sdn.csv"}}');
    for (const k of Object.keys(o)) if (k !== 'path' && k !== 'maxAgeMs') throw bad(`screening.ofacSdn.${k}`, 'is not a setting (known: path, maxAgeMs)');
    if (typeof o.path !== 'string' || o.path === '') throw bad('screening.ofacSdn.path', 'must name the sdn.csv file');
    if (o.maxAgeMs !== undefined && !(isMs(o.maxAgeMs) && (o.maxAgeMs as number) > 0)) throw bad('screening.ofacSdn.maxAgeMs', 'must be a positive integer of milliseconds');
  }
  return v as RailsSection;
}


/** The adapters and settings a RailsSection asks for, secrets read; refuses sandbox parts in production. */
export function buildRails(section: RailsSection, o: { mode: 'sandbox' | 'production'; env: NodeJS.ProcessEnv; clock: Clock; baseDir: string; webhookToleranceMs?: number }): RailsConfig {
  const webhookToleranceMs = section.webhookToleranceMs ?? o.webhookToleranceMs ?? 5 * 60_000;
  const providers = [];
  if (section.stripe) {
    const s = section.stripe;
    const topUps = s.topUps ?? true;
    const payouts = s.payouts ?? true;
    if (!topUps && !payouts) throw new RailsConfigError('rails.stripe', 'rails.stripe runs nothing: topUps and payouts are both false', 'remove the stripe section, or enable one');
    const secretKey = secret('stripe.secretKeyFile', s.secretKeyFile, 'STRIPE_SECRET_KEY', o.env, o.baseDir);
    const webhookSecret = topUps ? secret('stripe.webhookSecretFile', s.webhookSecretFile, 'STRIPE_WEBHOOK_SECRET', o.env, o.baseDir) : undefined;
    let api: { host: string; port: number; protocol: 'http' | 'https' } | undefined;
    if (s.apiUrl) {
      const u = new URL(s.apiUrl);
      api = { host: u.hostname, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)), protocol: u.protocol === 'https:' ? 'https' : 'http' };
    }
    providers.push(...stripeAdapters({
      secretKey, clock: o.clock, webhookToleranceMs, topUps, payouts,
      ...(webhookSecret ? { webhookSecret } : {}), ...(s.payoutRails ? { payoutRails: s.payoutRails } : {}), ...(api ? { api } : {}),
      ...(s.checkout ? { checkout: s.checkout } : {}),
    }));
  }
  let pricing: RailAdapters['pricing'] | undefined;
  if (section.usdc) {
    const usdc = usdcFromSection(section.usdc, o);
    providers.push(usdc.adapter);
    pricing = usdc.pricing;
  }
  let screening: ScreeningService;
  if (section.screening === 'sandbox') {
    if (o.mode === 'production') {
      throw new RailsConfigError('rails.screening', 'rails.screening "sandbox" is refused in production mode: it screens against a test list, not the sanctions lists', 'configure {"ofacSdn": {"path": "…/sdn.csv"}}');
    }
    screening = { screen: async (d) => ((SANDBOX_SANCTIONED as readonly string[]).includes(d.trim().toLowerCase()) ? 'sanctioned' : 'clear') };
  } else if (section.screening) {
    const { path, maxAgeMs } = section.screening.ofacSdn;
    screening = new OfacSdnScreening({ path: resolve(o.baseDir, path), clock: o.clock, ...(maxAgeMs !== undefined ? { maxAgeMs } : {}) });
  } else {
    if (providers.some((p) => p.payouts)) {
      throw new RailsConfigError('rails.screening', 'rails.screening is required when a payout adapter runs: every payout destination is screened', 'add "screening": {"ofacSdn": {"path": "…/sdn.csv"}}');
    }
    screening = { screen: async () => { throw new RailUnavailable('screening', 'no sanctions screening is configured (rails.screening)'); } };
  }
  const adapters: RailAdapters = {
    providers,
    screening,
    // without a USDC rail a USDC price is never needed
    pricing: pricing ?? { usdcPriceMicros: async () => { throw new RailUnavailable('pricing', 'no USDC price feed is configured'); } },
  };
  return {
    adapters,
    webhookToleranceMs,
    ...(section.pollIntervalMs !== undefined ? { pollIntervalMs: section.pollIntervalMs } : {}),
    ...(section.reconcileIntervalMs !== undefined ? { reconcileIntervalMs: section.reconcileIntervalMs } : {}),
  };
}
