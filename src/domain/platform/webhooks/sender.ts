/**
 * How a delivery leaves the gateway: one POST, answered or not within a timeout. Injected, so
 * tests can count or fail sends; the default is node's http/https client.
 */
import http from 'node:http';
import https from 'node:https';

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** The endpoint's answer; a network failure or a timeout rejects instead. */
export interface WebhookResponse {
  status: number;
}

export type WebhookSender = (req: WebhookRequest) => Promise<WebhookResponse>;

/** At most this much of an answer is read (and thrown away): a receiver cannot make the gateway buffer much. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** node's client; `ca` adds trusted certificates for https endpoints (a local receiver in tests). */
export function httpSender(opts: { ca?: string | Buffer } = {}): WebhookSender {
  return (req) =>
    new Promise<WebhookResponse>((resolve, reject) => {
      const url = new URL(req.url);
      const lib = url.protocol === 'https:' ? https : http;
      const r = lib.request(url, {
        method: 'POST',
        headers: { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
        timeout: req.timeoutMs,
        ...(url.protocol === 'https:' && opts.ca ? { ca: opts.ca } : {}),
      }, (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_ANSWER_BYTES) res.destroy();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('close', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0 }));
      });
      r.on('timeout', () => r.destroy(new Error(`no answer within ${req.timeoutMs} ms`)));
      r.on('error', reject);
      r.end(req.body);
    });
}
