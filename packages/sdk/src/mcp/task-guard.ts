/**
 * Paid tools are never run as MCP tasks (a tools/call with `params.task`, MCP 2025-11-25).
 *
 * Every tool `McpServer.registerTool` makes has taskSupport "forbidden", and the spec asks a
 * server to answer a task-augmented call of such a tool with -32601. @modelcontextprotocol/sdk 1.x
 * does not: on a server that declares task support for tools/call (a `taskStore` and
 * `capabilities.tasks.requests.tools.call`), McpServer runs the tool as a plain call, and the
 * SDK's Server then rejects its result for not being a CreateTaskResult. For a paid tool that is
 * after the call was authorized and settled: the buyer is charged and gets neither the result
 * nor the receipt. (A server that does not declare task support refuses such a call itself,
 * before any handler runs.)
 *
 * A tool callback cannot see `params.task` (only `task.ttl` reaches it, and `task: {}` is what
 * the SDK's own client sends), so the guard wraps the tools/call handler McpServer installed,
 * in its Server's handler table: a task-augmented call of a paid tool is refused there with
 * -32601 before it reaches the tool. The calls it saw without `params.task` are marked: on a
 * server with a task store, a paid callback runs only for a call known to be plain, so one the
 * guard does not cover (`paidToolCallback` registered by hand, or an SDK whose handler table
 * moved) refuses rather than risks being charged without an answer (`mayBeTaskCall`).
 */
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

type RequestHandler = (request: { method: string; params?: Record<string, unknown> }, extra: object) => Promise<unknown>;

/** Per McpServer: the names its paid tools are called by. */
const paidNames = new WeakMap<McpServer, Set<string>>();

/** The `extra` of each tools/call the guard saw without `params.task` (the same object reaches the tool callback). */
const plainCalls = new WeakSet<object>();

/** Refuses task-augmented calls of `tool` (a paid tool registered on `server` as `name`), from now on. */
export function guardTaskCalls(server: McpServer, tool: RegisteredTool, name: string): void {
  let names = paidNames.get(server);
  if (!names) {
    const handlers = (server.server as unknown as { _requestHandlers?: Map<string, RequestHandler> })._requestHandlers;
    const call = handlers instanceof Map ? handlers.get('tools/call') : undefined;
    if (!call) return; // not covered: its paid callbacks refuse every call if it has a task store (mayBeTaskCall)
    const paid = (names = new Set());
    paidNames.set(server, paid);
    handlers!.set('tools/call', async (request, extra) => {
      const params = request.params ?? {};
      if (params.task !== undefined && typeof params.name === 'string' && paid.has(params.name)) {
        throw new McpError(ErrorCode.MethodNotFound, `tool ${params.name} is a paid tool and cannot be called as a task (params.task); call it without params.task. Nothing was charged`);
      }
      if (params.task === undefined) plainCalls.add(extra);
      return call(request, extra);
    });
  }
  names.add(name);
  // a paid tool renamed (or removed) through its handle keeps (or loses) the guard under its new name
  const paid = names;
  let current: string | null = name;
  const update = tool.update;
  tool.update = (updates) => {
    if (updates.name !== undefined && updates.name !== current) {
      if (current !== null) paid.delete(current);
      if (updates.name) paid.add(updates.name);
      current = updates.name;
    }
    update(updates);
  };
}

/**
 * True when a paid call may be task-augmented: its server has a task store (so it may accept
 * `params.task`) and the guard did not see the call without one.
 */
export function mayBeTaskCall(extra: { taskStore?: unknown }): boolean {
  return extra.taskStore !== undefined && !plainCalls.has(extra);
}
