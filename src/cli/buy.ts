/**
 * `agentpay buy`: one paid call from the command line with the buyer client. A
 * capability id is resolved to its endpoint through the gateway; a URL is called as
 * is. The buyer does the whole 402 flow (verify the quote, check that it is for the
 * capability asked for, check the ceiling (--max-price, else the SDK's default,
 * DEFAULT_MAX_PRICE_MINOR), sign, retry, verify the receipt against the bytes received);
 * this file only prepares the request, trusts the right certificates and reports progress. An MCP capability at a URL is one tool call through the MCP
 * buyer (payingCallTool) over streamable HTTP, the same steps over `_meta`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createPrivateKey, type KeyObject } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { rootCertificates } from 'node:tls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Agent, fetch as undiciFetch } from 'undici';
import { createBuyer, type Buyer, type PaidResponse } from 'agentpay-sdk/buyer';
import type { ApprovalWaitOptions } from 'agentpay-sdk/buyer';
import { payingCallTool } from 'agentpay-sdk/mcp/buyer';
import { resultBytes } from 'agentpay-sdk/mcp/protocol';
import { writeFileAtomic } from '../core/files.js';
import type { AgentpayClient } from 'agentpay-sdk/client';
import { AgentpayError } from 'agentpay-sdk/errors';
import { decodeHeader, PAYMENT_HEADER, type PaymentProof } from 'agentpay-sdk/protocol';
import type { CapabilityDetail, Receipt } from 'agentpay-sdk/types';
import { parsePrice } from './capabilities.js';
import { readCa, requireBaseUrl, type Connection } from './client.js';
import { CliError, networkFailure, usageError } from './errors/index.js';
import { renderFields } from './output.js';
import { receiptFields } from './receipts.js';
import { closeAtEnd } from './open-connections.js';

export interface BuyOptions {
  /** a capability id (cap_…) or the URL to call */
  target: string;
  walletId: string;
  keyFile: string;
  maxPrice?: string | undefined;
  method?: string | undefined;
  /** request body, sent as is */
  data?: string | undefined;
  dataFile?: string | undefined;
  /** "name: value" */
  headers?: readonly string[] | undefined;
  /** told what is happening (for a spinner) */
  onProgress?: (step: string) => void;
  /**
   * when a policy holds the purchase for a person: wait up to this long for the decision (reading the
   * approval with the connection's key, which needs approvals:read), then buy once more if approved
   */
  waitApproval?: { timeoutMs: number; onPending: (approvalId: string) => void } | undefined;
  /**
   * a file to write the response's exact bytes to (the bytes the receipt's responseHash covers; for an
   * MCP tool, the canonical JSON of its result), for `agentpay receipts verify --response FILE`
   */
  output?: string | undefined;
}

export interface BuyResult {
  url: string;
  capabilityId: string | null;
  /** the MCP tool called, for an MCP capability */
  tool?: string;
  /** the HTTP status; null for an MCP tool call */
  status: number | null;
  ok: boolean;
  /** parsed JSON when the seller answered JSON, else text; an MCP tool's result ({content, structuredContent?, isError?}) */
  body: unknown;
  /** the platform-signed receipt, already verified by the buyer (signature and response hash); null for a free call */
  receipt: Receipt | null;
  /** with --output: where the exact response bytes were written, and how many */
  output?: { path: string; bytes: number };
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** The URL a capability is called at (and its tool, for an MCP capability), or why `buy` cannot call it. */
async function endpointOf(client: AgentpayClient, id: string): Promise<{ url: string; tool: string | null; detail: CapabilityDetail }> {
  const detail = await client.capabilities.get(id);
  const v = detail.version;
  if (!v) {
    throw new CliError('CAPABILITY_NOT_DISCOVERABLE', `${id} is not discoverable (deprecated, or its seller is unverified or suspended), so its address is hidden`, {
      tryNext: 'find another with: agentpay search QUERY',
      details: { capabilityId: id },
    });
  }
  if (v.address.kind !== 'url') {
    throw new CliError('NOT_CALLABLE', `${id} is an npx package the buying agent runs itself (${[v.address.command, ...v.address.args].join(' ')}) as an MCP server over stdio; buy calls URL endpoints`, {
      tryNext: `run it from your agent: connectPackageCapability (or launchPackageCapability) and payingCallTool from agentpay-sdk/mcp/buyer, calling the tool ${detail.capability.toolName ?? '(its toolName)'}`,
      details: { capabilityId: id },
    });
  }
  return { url: v.address.url, tool: detail.capability.protocol === 'mcp' ? (detail.capability.toolName ?? null) : null, detail };
}

/**
 * The agent's private key from --key-file, checked before anything is sent: an ed25519
 * private key in PEM. Returned as the PKCS#8 PEM the buyer takes (Node reads more forms).
 */
export function readKeyFile(full: string): string {
  const bad = (problem: string) =>
    usageError(`--key-file: ${full} ${problem}`, "pass the agent's ed25519 private key (PEM), e.g. the --key-file given to agentpay wallets create --generate-key", { flag: '--key-file' });
  let pem: string;
  try {
    pem = readFileSync(full, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw bad(code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : `cannot be read (${code ?? (e as Error).message})`);
  }
  if (!pem.trim()) throw bad('is empty');
  if (/-----BEGIN PUBLIC KEY-----/.test(pem) && !/PRIVATE KEY-----/.test(pem)) throw bad("is a public key; buy signs with the wallet's private key");
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----/.test(pem)) throw bad('is encrypted; buy needs the key unencrypted');
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    throw bad('is not a PEM private key (expected "-----BEGIN PRIVATE KEY-----"), or it is damaged');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw bad(`is an ${key.asymmetricKeyType ?? 'unknown'} key, not ed25519`);
  return key.export({ type: 'pkcs8', format: 'pem' }).toString();
}

function parseHeaders(list: readonly string[]): Headers {
  const headers = new Headers();
  for (const h of list) {
    const i = h.indexOf(':');
    if (i <= 0) throw usageError(`--header: expected "name: value", got ${JSON.stringify(h)}`, undefined, { flag: '--header' });
    headers.append(h.slice(0, i).trim(), h.slice(i + 1).trim());
  }
  return headers;
}

/**
 * The body to send, as given. Without a content-type header it is sent as JSON, so it
 * must parse as JSON: a typo fails here, before anything is paid.
 */
function bodyOf(o: BuyOptions, headers: Headers): string | undefined {
  if (o.data !== undefined && o.dataFile !== undefined) throw usageError('pass either --data or --data-file, not both', undefined, { flag: '--data' });
  const flag = o.data !== undefined ? '--data' : '--data-file';
  const body = o.data ?? (o.dataFile !== undefined ? readDataFile(o.dataFile) : undefined);
  if (body === undefined || headers.has('content-type')) return body;
  try {
    JSON.parse(body);
  } catch (e) {
    throw usageError(`${flag}: not valid JSON (${(e as Error).message})`, 'pass JSON, or set the type of another body: --header "content-type: text/plain"', { flag });
  }
  headers.set('content-type', 'application/json');
  return body;
}

/** An MCP tool's arguments: --data or --data-file as a JSON object; {} without either. */
function toolArguments(o: BuyOptions): Record<string, unknown> {
  if (o.data !== undefined && o.dataFile !== undefined) throw usageError('pass either --data or --data-file, not both', undefined, { flag: '--data' });
  if (o.method !== undefined) throw usageError('--method: an MCP tool is called with tools/call, not an HTTP method; leave --method out', undefined, { flag: '--method' });
  const flag = o.data !== undefined ? '--data' : '--data-file';
  const text = o.data ?? (o.dataFile !== undefined ? readDataFile(o.dataFile) : undefined);
  if (text === undefined) return {};
  const hint = `pass the tool's arguments as a JSON object, e.g. ${flag === '--data' ? '--data \'{"text":"..."}\'' : 'a file holding {"text":"..."}'}`;
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw usageError(`${flag}: not valid JSON (${(e as Error).message})`, hint, { flag });
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw usageError(`${flag}: the arguments of an MCP tool are a JSON object, not ${JSON.stringify(args)}`, hint, { flag });
  return args as Record<string, unknown>;
}

function readDataFile(path: string): string {
  const full = resolve(path);
  if (!existsSync(full)) throw usageError(`--data-file: ${full} does not exist`, undefined, { flag: '--data-file' });
  return readFileSync(full, 'utf8');
}

/**
 * A seller that gives no answer (refused, reset, DNS, TLS): the seller's failure, named with
 * its URL, not the gateway's (the generic connection report assumes the gateway). Before the
 * proof nothing was paid; after it, the seller may have charged before the connection broke.
 */
function sellerUnreachable(url: string, e: unknown, paid: boolean): CliError | undefined {
  const failure = networkFailure(e);
  if (!failure) return undefined;
  const what = failure.tls ? `TLS connection to the seller at ${url} failed` : `cannot reach the seller at ${url}`;
  return new CliError('SELLER_UNREACHABLE', `${what} (${failure.cause}); ${paid ? 'the payment proof was sent' : 'nothing was paid'}`, {
    tryNext: paid
      ? 'if the seller received the proof, agentpay receipts list shows the receipt of the call (a failed call is refunded)'
      : failure.tls
        ? "the seller's certificate is not trusted: sellers are trusted like any HTTPS site, plus the gateway's CA (--ca, --data-dir)"
        : 'check the URL (or the capability\'s endpoint: agentpay capabilities show ID) and that the seller is running',
    details: { url, cause: failure.cause },
  });
}

/**
 * Sellers are trusted like any HTTPS site (the system's roots), plus the gateway's CA
 * when one is configured: a local dev gateway's certificate also serves local sellers.
 * The fetch also reports progress: the request carrying a proof is the payment.
 */
function sellerFetch(ca: string | undefined, onProgress: (step: string) => void): typeof fetch {
  const dispatcher = trustingDispatcher(ca);
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const proof = new Headers(init?.headers).get(PAYMENT_HEADER);
    if (proof) {
      const { challenge } = decodeHeader<PaymentProof>(proof);
      onProgress(`paying ${challenge.amountMinor} ${challenge.currency} minor units and waiting for the seller`);
    }
    try {
      return await undiciFetch(input as never, { ...(init as object), ...(dispatcher ? { dispatcher } : {}) } as never);
    } catch (e) {
      throw sellerUnreachable(String(input instanceof Request ? input.url : input), e, proof !== null) ?? e;
    }
  }) as unknown as typeof fetch;
}

const trustingDispatcher = (ca: string | undefined) => (ca ? closeAtEnd(new Agent({ connect: { ca: [...rootCertificates, ca] } })) : undefined);

/**
 * One call of an MCP capability's tool over streamable HTTP with the MCP buyer: connect,
 * call, pay if asked, close. The seller is trusted like a REST seller. Before the proof is
 * sent a seller without an answer is SELLER_UNREACHABLE "nothing was paid"; after it the MCP
 * buyer says so (`paid: true`).
 */
async function buyTool(target: { url: string; capabilityId: string; tool: string }, buyer: Buyer, o: BuyOptions, headers: Headers, ca: string | undefined, progress: (step: string) => void, approval: ApprovalWaitOptions | undefined, outputFile: string | undefined): Promise<BuyResult> {
  const args = toolArguments(o);
  const dispatcher = trustingDispatcher(ca);
  const fetchSeller = ((input: string | URL, init?: RequestInit) => undiciFetch(input as never, { ...(init as object), ...(dispatcher ? { dispatcher } : {}) } as never)) as unknown as typeof fetch;
  const transport = new StreamableHTTPClientTransport(new URL(target.url), { fetch: fetchSeller, requestInit: { headers } });
  const client = new Client({ name: 'agentpay-cli', version: '1' });
  try {
    progress(`connecting to the MCP server at ${target.url}`);
    await client.connect(transport);
    progress(`calling tool ${target.tool}`);
    const { result, receipt } = await payingCallTool(client, buyer, { name: target.tool, arguments: args }, { capabilityId: target.capabilityId, ...(approval ? { approval } : {}) });
    const { _meta: _receiptEtc, ...body } = result as CallToolResult;
    // the bytes the receipt's responseHash covers: the canonical JSON of the result, not the JSON-RPC frame
    const output = writeOutput(outputFile, resultBytes(result as CallToolResult));
    return { url: target.url, capabilityId: receipt?.capabilityId ?? target.capabilityId, tool: target.tool, status: null, ok: result.isError !== true, body, receipt, ...(output ? { output } : {}) };
  } catch (e) {
    if (e instanceof AgentpayError) {
      if (e.code !== 'SELLER_UNREACHABLE') throw withNextStep(e, o);
      // the MCP buyer's: the proof was sent, the answer is lost
      throw new CliError(e.code, e.message, {
        tryNext: 'agentpay receipts list shows the receipt of the call once the seller settled it (a failed call is refunded); check it before buying again',
        details: { ...e.details, url: target.url },
      });
    }
    // before any proof: the MCP server could not be reached, or answered with an error of its own
    throw sellerUnreachable(target.url, e, false) ?? new CliError('MCP_ERROR', `the MCP server at ${target.url} failed before any payment (${e instanceof Error ? e.message : String(e)}); nothing was paid`, {
      tryNext: `check the capability's endpoint (agentpay capabilities show ${target.capabilityId}) and that the tool ${target.tool} exists there`,
      details: { url: target.url, tool: target.tool },
    });
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * The --output path, checked before anything is paid: a file (new or replaced) in a directory
 * that exists. Writing it afterwards can still fail (a full disk): the purchase is then reported
 * as FILE_ERROR naming the file, and its receipt is in agentpay receipts list.
 */
function outputPath(path: string): string {
  const full = resolve(path);
  const bad = (problem: string, tryNext: string) => usageError(`--output: ${full} ${problem}`, tryNext, { flag: '--output' });
  const stat = (p: string) => {
    try {
      return statSync(p);
    } catch {
      return undefined;
    }
  };
  if (stat(full)?.isDirectory()) throw bad('is a directory', 'name a file to write the response to, e.g. --output response.bin');
  const dir = stat(dirname(full));
  if (!dir) throw bad(`cannot be written: the directory ${dirname(full)} does not exist`, `create it first (mkdir -p ${dirname(full)}), or name a file in an existing directory`);
  if (!dir.isDirectory()) throw bad(`cannot be written: ${dirname(full)} is not a directory`, 'name a file in a directory');
  return full;
}

/** Writes the response's bytes to --output (replacing the file at once, never half of it). */
function writeOutput(path: string | undefined, bytes: Uint8Array): { path: string; bytes: number } | undefined {
  if (path === undefined) return undefined;
  writeFileAtomic(path, bytes);
  return { path, bytes: bytes.byteLength };
}

/** A seller's body as the buyer SDK reads it: parsed JSON when it says JSON, else text. */
function parsedBody(headers: Headers, bytes: Uint8Array): unknown {
  const text = new TextDecoder().decode(bytes);
  if ((headers.get('content-type') ?? '').includes('json') && text) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

/** How often `buy --wait-approval` reads the approval it waits on. */
const APPROVAL_POLL_MS = 1000;

/** Client-side refusals with the next step a person can take. */
export function withNextStep(e: unknown, o: BuyOptions): unknown {
  if (!(e instanceof AgentpayError)) return e;
  const next: Record<string, string> = {
    PRICE_ABOVE_CLIENT_LIMIT: `raise it with --max-price ${String(e.details.amountMinor)} if that price is right, or find a cheaper one: agentpay search QUERY --max-price ${o.maxPrice ?? String(e.details.maxPriceMinor)}`,
    WALLET_PROVIDER_PAUSED: `resume the seller for this wallet: agentpay wallets resume-provider ${o.walletId} --provider PROVIDER_ID`,
    APPROVAL_REQUIRED: typeof e.body.approvalId === 'string'
      ? `a person must approve the spend: agentpay approvals approve ${e.body.approvalId} (or review it in agentpay approvals); then run buy again once${o.waitApproval ? '' : ', or run it with --wait-approval SECONDS to wait for the decision'}`
      : 'a person must approve the spend: agentpay approvals; then run buy again once',
    APPROVAL_DENIED: typeof e.details.standsUntil === 'string'
      ? `a person denied this purchase: it is refused at this price or more until ${e.details.standsUntil}; do not retry`
      : 'a person denied this purchase: it is refused at this price or more while the denial stands; do not retry',
    INVALID_CHALLENGE: 'the seller is not answering with this gateway\'s price challenges: check that it uses the same gateway (--gateway-url)',
    INVALID_RECEIPT: 'the seller changed its response after it was paid for; report it to the seller',
    CHALLENGE_MISMATCH: `the seller at this address sells ${String(e.details.challengeCapabilityId)}, not ${String(e.details.capabilityId)}: check the capability (agentpay capabilities show ${String(e.details.capabilityId)}) and report it to its seller`,
  };
  // the gateway's FORBIDDEN for a proof signed with another key: the key file is at fault, not the tenant
  if (e.code === 'FORBIDDEN' && e.details.reason === 'proof_signer_mismatch') {
    next.FORBIDDEN = `${resolve(o.keyFile)} is not the key registered on wallet ${o.walletId}: pass that wallet's private key (the --key-file given to agentpay wallets create --generate-key), or the wallet whose key it is`;
  }
  const tryNext = next[e.code];
  if (!tryNext) return e;
  // the buyer's message names its option maxPriceMinor; the person typed --max-price
  const overLimit = e.code === 'PRICE_ABOVE_CLIENT_LIMIT';
  const message = overLimit
    ? `the price ${String(e.details.amountMinor)} ${String(e.details.currency)} minor units is above ${o.maxPrice === undefined ? `the default limit of ${String(e.details.maxPriceMinor)} (--max-price was not given)` : `--max-price ${String(e.details.maxPriceMinor)}`}; nothing was signed`
    : e.message;
  return new CliError(e.code, message, {
    tryNext,
    details: { ...e.details, ...(overLimit ? { flag: '--max-price' } : e.code === 'FORBIDDEN' ? { flag: '--key-file' } : {}), ...(e.status ? { status: e.status } : {}), ...(typeof e.body.approvalId === 'string' ? { approvalId: e.body.approvalId } : {}) },
  });
}

/**
 * `client` is needed only to resolve a capability id (capabilities:read); a URL needs
 * no API key: the agent's key pays.
 */
export async function buy(conn: Connection, client: () => AgentpayClient, o: BuyOptions): Promise<BuyResult> {
  const progress = o.onProgress ?? (() => {});
  const maxPriceMinor = o.maxPrice !== undefined ? parsePrice(o.maxPrice, '--max-price') : undefined;
  const privateKeyPem = readKeyFile(resolve(o.keyFile));
  const headers = parseHeaders(o.headers ?? []);
  const outputFile = o.output !== undefined ? outputPath(o.output) : undefined;
  // a URL is called over HTTP; a capability's body is checked once its protocol is known
  let body = isUrl(o.target) ? bodyOf(o, headers) : undefined;
  const gatewayUrl = requireBaseUrl(conn);
  const ca = conn.ca ? readCa(conn.ca, conn) : undefined;

  let url = o.target;
  let capabilityId: string | null = null;
  let tool: string | null = null;
  if (!isUrl(o.target)) {
    progress(`looking up ${o.target}`);
    ({ url, tool } = await endpointOf(client(), o.target));
    capabilityId = o.target;
  }

  const buyer = createBuyer({
    env: false, // the CLI resolved its settings (flags, environment, profile)
    gatewayUrl,
    ...(ca ? { ca } : {}),
    walletId: o.walletId,
    privateKeyPem,
    fetch: sellerFetch(ca, progress),
    ...(maxPriceMinor ? { maxPriceMinor } : {}),
  });
  const approval: ApprovalWaitOptions | undefined = o.waitApproval
    ? { approvals: client(), timeoutMs: o.waitApproval.timeoutMs, pollMs: APPROVAL_POLL_MS, onPending: o.waitApproval.onPending }
    : undefined;
  if (tool !== null && capabilityId !== null) return buyTool({ url, capabilityId, tool }, buyer, o, headers, ca, progress, approval, outputFile);
  if (capabilityId !== null) body = bodyOf(o, headers);
  progress(`calling ${url}`);
  let purchase: { response: PaidResponse; bytes: Uint8Array };
  // the body is a string or bytes read up front, so a purchase held for a person can be sent again as it was
  const attempt = async () => {
    const response = await buyer.fetch(url, {
      method: (o.method ?? (body !== undefined ? 'POST' : 'GET')).toUpperCase(),
      headers,
      ...(body !== undefined ? { body } : {}),
      // what was looked up is what is paid for: a seller there quoting another capability is refused before signing
      ...(capabilityId !== null ? { capabilityId } : {}),
    });
    // the exact bytes received (those the receipt was verified against), kept for --output
    return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
  };
  try {
    purchase = await (approval ? buyer.payer.withApproval(attempt, approval) : attempt());
  } catch (e) {
    throw withNextStep(e, o);
  }
  const { response, bytes } = purchase;
  const output = writeOutput(outputFile, bytes);
  return {
    url,
    capabilityId: response.receipt?.capabilityId ?? capabilityId,
    status: response.status,
    ok: response.ok,
    body: parsedBody(response.headers, bytes),
    receipt: response.receipt,
    ...(output ? { output } : {}),
  };
}

// ---- how a person sees a purchase ----

export function buyText(r: BuyResult): string {
  const body = r.output
    ? `response saved to ${r.output.path} (${r.output.bytes} bytes, exactly as received; check it with agentpay receipts verify ${r.receipt?.id ?? 'RECEIPT'} --response ${r.output.path})`
    : typeof r.body === 'string' ? r.body : JSON.stringify(r.body, null, 2);
  const receipt = r.receipt
    ? `receipt (signature and response hash verified):\n${receiptFields(r.receipt)}`
    : renderFields([['receipt', 'none (the seller did not charge for this call)']]);
  const outcome = r.status === null ? `MCP tool ${r.tool ?? ''}: ${r.ok ? 'result' : 'tool error'}` : `HTTP ${r.status}`;
  return [body, '', outcome, receipt].join('\n');
}

/** Why a paid call that went through still failed, for stderr; undefined when it succeeded. */
export function failureNote(r: BuyResult): string | undefined {
  if (r.ok) return undefined;
  const answered = r.status === null ? `The tool ${r.tool ?? ''} answered a tool error` : `The seller answered ${r.status}`;
  if (r.receipt?.status === 'failed') return `${answered}; the call failed and the hold was refunded (receipt ${r.receipt.id}): nothing was paid.`;
  // no receipt: the seller refused before charging (a 4xx to the call itself, or no price asked)
  if (!r.receipt) return `${answered}; nothing was paid.`;
  return `${answered}.`;
}
