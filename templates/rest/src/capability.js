/**
 * What this seller sells, as published on the gateway (POST /v1/capabilities). The price
 * is a string of integer minor units: "100" is 1.00 USD per call.
 */
import { summarizeBody } from './schema.js';

export const PAID_PATH = '/summarize';

export const capability = {
  name: "{{name}}",
  description: "{{description}}",
  category: "{{category}}",
  priceMinor: "{{priceMinor}}",
  protocol: 'rest',
  schema: summarizeBody,
};

/** The body of a publish call for a seller reachable at `sellerUrl` (e.g. https://api.example.com). */
export function publishInput(sellerUrl) {
  return { ...capability, endpoint: new URL(PAID_PATH, sellerUrl).href };
}
