/**
 * `agentpay mcp proxy -- SERVER COMMAND...`: a stdio MCP server that stands between an MCP host
 * (a desktop app, an IDE, any agent that launches MCP servers over stdio) and another stdio MCP
 * server, and pays that server's paid tools with an agent wallet configured once, here.
 *
 * A relay of JSON-RPC messages, not a second server: initialize, capabilities, tools/list,
 * resources, prompts, notifications, and the server's own requests to the host (sampling,
 * elicitation, roots) pass through unchanged in both directions. Only the host's `tools/call`
 * requests are taken over: each is made by an MCP `Client` that shares the child's stdio
 * (its own request ids, prefixed, so that no answer goes astray) and is wrapped with
 * wrapMcpClient: a paid tool's price challenge is verified, checked against the ceiling and the
 * capability the tool advertises, paid and called again; the receipt is verified before the
 * result goes back to the host, unchanged. A server whose paid tools offer payment sessions is paid
 * with them (one open, then a voucher per call, topped up when the cap runs low); the sessions are
 * closed (the rest of each cap released) when the host goes away. A refusal (PRICE_ABOVE_CLIENT_LIMIT,
 * INSUFFICIENT_FUNDS, POLICY_DENIED, ...) goes back as a tool error whose text names the code
 * and what to do, so the model and the person see it; the code is also in
 * `_meta["agentpay/error"]`.
 *
 * stdout carries only MCP messages; everything else (the start line, each payment, errors)
 * goes to stderr, which hosts keep as the server's log. The child inherits this process's
 * environment minus the AGENTPAY_* variables (the wallet's key and API keys stay here) and
 * writes its stderr to ours.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, type CallToolRequest, type CallToolResult, type JSONRPCMessage, type ProgressToken } from '@modelcontextprotocol/sdk/types.js';
import { createBuyer, DEFAULT_MAX_PRICE_MINOR } from 'agentpay-sdk/buyer';
import { AgentpayError } from 'agentpay-sdk/errors';
import { wrapMcpClient } from 'agentpay-sdk/mcp/buyer';
import { parsePrice } from './capabilities.js';
import { readKeyFile } from './buy.js';
import { readCa, requireBaseUrl, type Connection } from './client.js';
import { usageError } from './errors/index.js';
import { resolve } from 'node:path';

export interface ProxyOptions {
  walletId: string;
  keyFile: string;
  maxPrice?: string | undefined;
  /** the MCP server to run: its command and arguments */
  server: readonly string[];
  /** a paid call's time limit, ms (the host usually has its own) */
  timeoutMs: number;
  /** where log lines go (stderr) */
  log: (line: string) => void;
}

/** How long the proxy waits, when the host goes away, for the server to close the payment sessions. */
const SESSION_CLOSE_WAIT_MS = 10_000;

/** The prefix of the ids of the requests the proxy's own client sends to the child. */
const OWN = 'agentpay-proxy-';

type Message = JSONRPCMessage & { id?: string | number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };

const isRequest = (m: Message) => m.method !== undefined && m.id !== undefined;
const isNotification = (m: Message) => m.method !== undefined && m.id === undefined;

/**
 * A transport for the proxy's own Client: what it sends goes to the child with its ids (and
 * progress tokens) prefixed; what comes back for those ids is handed to it with the prefix removed.
 * It has a sessionId, so Client.connect does not initialize again: the host already did.
 */
class OwnTransport implements Transport {
  sessionId = 'agentpay-proxy';
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;

  constructor(private readonly child: Transport) {}

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    const m = { ...(message as Message) };
    if (m.id !== undefined) m.id = `${OWN}${m.id}`;
    const meta = m.params?._meta as { progressToken?: ProgressToken } | undefined;
    if (meta?.progressToken !== undefined) m.params = { ...m.params, _meta: { ...meta, progressToken: `${OWN}${meta.progressToken}` } };
    await this.child.send(m as JSONRPCMessage);
  }

  /** A message from the child: true when it was this client's (an answer to it, or progress of its request). */
  accept(message: Message): boolean {
    const unprefix = (v: unknown): string | number | undefined => {
      if (typeof v !== 'string' || !v.startsWith(OWN)) return undefined;
      const rest = v.slice(OWN.length);
      return /^\d+$/.test(rest) ? Number(rest) : rest;
    };
    if (!isNotification(message)) {
      const id = unprefix(message.id);
      if (id === undefined) return false;
      this.onmessage?.({ ...message, id } as JSONRPCMessage);
      return true;
    }
    if (message.method === 'notifications/progress') {
      const token = unprefix(message.params?.progressToken);
      if (token === undefined) return false;
      this.onmessage?.({ ...message, params: { ...message.params, progressToken: token } } as JSONRPCMessage);
      return true;
    }
    return false;
  }

  async close(): Promise<void> {
    this.onclose?.();
  }
}

/** A refusal as the tool result the host shows: what happened, and what the person can do. */
function refusalResult(tool: string, e: AgentpayError): CallToolResult {
  const next: Record<string, string> = {
    PRICE_ABOVE_CLIENT_LIMIT: `if that price is right, restart the proxy with --max-price ${String(e.details.amountMinor)} (or more)`,
    INSUFFICIENT_FUNDS: 'fund the wallet (agentpay wallets fund WALLET AMOUNT), then call again',
    APPROVAL_REQUIRED: `a person must approve the spend${typeof e.body.approvalId === 'string' ? ` (agentpay approvals approve ${e.body.approvalId})` : ''}, then call again once`,
    POLICY_DENIED: 'a spending rule of the workspace refused it: do not retry',
  };
  const text = `agentpay did not pay for tool ${tool}: ${e.code}: ${e.message}${next[e.code] ? `. Next: ${next[e.code]}` : ''}`;
  return {
    isError: true,
    content: [{ type: 'text', text }],
    _meta: { 'agentpay/error': { code: e.code, message: e.message, details: e.details, ...(typeof e.body.approvalId === 'string' ? { approvalId: e.body.approvalId } : {}) } },
  };
}

/** The child's environment: this one's, without agentpay's own settings (keys, key file, wallet). */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('AGENTPAY_')) env[k] = v;
  return env;
}

/**
 * Checks everything (key, ceiling, gateway), starts the server and relays until the host or the
 * server closes; resolves with the exit code (the server's, or 0 when the host closed).
 */
export async function runProxy(conn: Connection, o: ProxyOptions): Promise<number> {
  const [command, ...args] = o.server;
  if (!command) {
    throw usageError('no MCP server to run: put its command after --', 'agentpay mcp proxy --wallet wal_… --key-file agent.pem -- npx -y some-mcp-server@1.2.3', { flag: '--' });
  }
  const maxPriceMinor = o.maxPrice !== undefined ? parsePrice(o.maxPrice, '--max-price') : undefined;
  const privateKeyPem = readKeyFile(resolve(o.keyFile));
  const gatewayUrl = requireBaseUrl(conn);
  const ca = conn.ca ? readCa(conn.ca, conn) : undefined;
  const buyer = createBuyer({ env: false, gatewayUrl, ...(ca ? { ca } : {}), walletId: o.walletId, privateKeyPem, ...(maxPriceMinor !== undefined ? { maxPriceMinor } : {}) });

  const child = new StdioClientTransport({ command, args, env: childEnv(), stderr: 'inherit' });
  const host = new StdioServerTransport();
  const own = new OwnTransport(child);
  const client = new Client({ name: 'agentpay-mcp-proxy', version: '1' });
  await client.connect(own);
  wrapMcpClient(client, buyer, {
    onPaid: ({ tool, receipt, sessionReceipt }) => o.log(receipt
      ? `agentpay: paid ${receipt.amount.amountMinor} ${receipt.amount.currency} minor units for tool ${tool} (receipt ${receipt.id}, ${receipt.status})`
      : `agentpay: paid ${sessionReceipt!.chargedMinor} minor units for tool ${tool} with session ${sessionReceipt!.sessionId} (voucher ${sessionReceipt!.sequence}, cumulative ${sessionReceipt!.cumulativeMinor})`),
  });

  /** The host's tools/call requests being paid for, by id: cancelling one aborts it (until its proof is sent). */
  const calls = new Map<string | number, AbortController>();
  const toHost = (m: Message) => host.send(m as JSONRPCMessage).catch((e: unknown) => o.log(`agentpay: could not write to the host: ${String(e)}`));

  async function payingCall(request: Message): Promise<void> {
    const id = request.id!;
    const params = request.params as CallToolRequest['params'];
    const ac = new AbortController();
    calls.set(id, ac);
    const hostToken = (params._meta as { progressToken?: ProgressToken } | undefined)?.progressToken;
    try {
      const result = await client.callTool(params, undefined, {
        signal: ac.signal,
        timeout: o.timeoutMs,
        // the child's progress, passed on with the host's own token
        ...(hostToken !== undefined ? { onprogress: (p) => void toHost({ jsonrpc: '2.0', method: 'notifications/progress', params: { ...p, progressToken: hostToken } } as Message), resetTimeoutOnProgress: true } : {}),
      });
      await toHost({ jsonrpc: '2.0', id, result } as Message);
    } catch (e) {
      if (e instanceof AgentpayError) {
        o.log(`agentpay: tool ${params.name}: ${e.code}: ${e.message}`);
        await toHost({ jsonrpc: '2.0', id, result: refusalResult(params.name, e) } as Message);
      } else if (e instanceof McpError) {
        await toHost({ jsonrpc: '2.0', id, error: { code: e.code, message: e.message, ...(e.data !== undefined ? { data: e.data } : {}) } } as Message);
      } else {
        await toHost({ jsonrpc: '2.0', id, error: { code: -32603, message: `agentpay mcp proxy: ${e instanceof Error ? e.message : String(e)}` } } as Message);
      }
    } finally {
      calls.delete(id);
    }
  }

  host.onmessage = (message) => {
    const m = message as Message;
    if (isRequest(m) && m.method === 'tools/call' && m.params?.task === undefined) {
      void payingCall(m);
      return;
    }
    if (isNotification(m) && m.method === 'notifications/cancelled') {
      const ac = calls.get(m.params?.requestId as string | number);
      if (ac) {
        ac.abort(); // the client tells the child about its own request
        return;
      }
    }
    child.send(message).catch((e: unknown) => o.log(`agentpay: could not write to the MCP server: ${String(e)}`));
  };
  child.onmessage = (message) => {
    if (own.accept(message as Message)) return;
    void toHost(message as Message);
  };

  return new Promise<number>((done, fail) => {
    let finished = false;
    const finish = (code: number, closeSessions: boolean) => {
      if (finished) return;
      finished = true;
      // the host is gone and the server still runs: its sellers close the sessions (the rest of each cap released)
      const closing = closeSessions && buyer.sessions().length > 0
        ? Promise.race([
            buyer.close().then((closed) => o.log(`agentpay: closed ${closed.length} payment session(s)`), (e: unknown) => o.log(`agentpay: closing the payment sessions failed: ${e instanceof Error ? e.message : String(e)}; they are released when they expire`)),
            new Promise<void>((r) => setTimeout(r, SESSION_CLOSE_WAIT_MS).unref()),
          ])
        : Promise.resolve();
      // the server is stopped (stdin closed, then SIGTERM) before this process exits
      void closing.then(() => Promise.allSettled([client.close(), child.close(), host.close()])).then(() => done(code));
    };
    host.onclose = () => finish(0, true);
    // stdin ended: the host is gone
    process.stdin.once('end', () => finish(0, true));
    child.onclose = () => {
      o.log('agentpay: the MCP server exited');
      finish(calls.size > 0 ? 1 : 0, false);
    };
    child.onerror = (e) => o.log(`agentpay: MCP server: ${e.message}`);
    host.onerror = (e) => o.log(`agentpay: host: ${e.message}`);
    child.start().then(async () => {
      await host.start();
      o.log(`agentpay mcp proxy: paying with wallet ${o.walletId} (at most ${String(maxPriceMinor ?? DEFAULT_MAX_PRICE_MINOR)} minor units per call${maxPriceMinor === undefined ? ', the default' : ''}) through ${gatewayUrl}; server: ${[command, ...args].join(' ')}`);
    }, (e: unknown) => {
      fail(usageError(`the MCP server could not be started: ${[command, ...args].join(' ')} (${e instanceof Error ? e.message : String(e)})`, 'check the command after -- (it must be on the PATH, or an absolute path)', { flag: '--' }));
    });
  });
}
