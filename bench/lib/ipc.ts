/**
 * The bench's processes talk over Node's IPC channel: the parent sends `{id, type, ...}`,
 * the child answers `{id, ok, result}` or `{id, ok: false, error}`. A child announces
 * it is ready with `{type: 'ready', ...}` once, before anything else.
 */
import { fork, type ChildProcess } from 'node:child_process';

export interface Request {
  id: number;
  type: string;
  [k: string]: unknown;
}

type Handler = (msg: Request) => Promise<unknown> | unknown;

/** In a child: answer the parent's requests with `handlers[type]`. */
export function serve(handlers: Record<string, Handler>): void {
  process.on('message', (raw) => {
    const msg = raw as Request;
    const h = handlers[msg.type];
    Promise.resolve()
      .then(() => {
        if (!h) throw new Error(`unknown request ${msg.type}`);
        return h(msg);
      })
      .then(
        (result) => process.send?.({ id: msg.id, ok: true, result }),
        (e: unknown) => process.send?.({ id: msg.id, ok: false, error: e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e) }),
      );
  });
  // the parent going away (even killed) closes the channel: do not linger as an orphan
  process.on('disconnect', () => process.exit(0));
}

export function ready(info: Record<string, unknown>): void {
  process.send?.({ type: 'ready', ...info });
}

/** A child process of the bench, with typed request/response over IPC. */
export class Child {
  private next = 1;
  private waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  readonly proc: ChildProcess;
  readonly ready: Promise<Record<string, unknown>>;

  constructor(readonly name: string, script: string, env: Record<string, string> = {}, nodeArgs: string[] = []) {
    // every child runs TypeScript through tsx, like the parent
    this.proc = fork(script, [], { execArgv: ['--import', 'tsx', ...nodeArgs], env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.ready = new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`${name} (pid ${this.proc.pid}) exited with ${code} before it was ready`));
      this.proc.once('exit', onExit);
      this.proc.on('message', (raw) => {
        const msg = raw as { type?: string; id?: number; ok?: boolean; result?: unknown; error?: string };
        if (msg.type === 'ready') {
          this.proc.off('exit', onExit);
          resolve(msg as Record<string, unknown>);
          return;
        }
        const w = msg.id !== undefined ? this.waiting.get(msg.id) : undefined;
        if (!w) return;
        this.waiting.delete(msg.id!);
        if (msg.ok) w.resolve(msg.result);
        else w.reject(new Error(`${name}: ${msg.error}`));
      });
    });
    this.proc.on('exit', (code) => {
      for (const w of this.waiting.values()) w.reject(new Error(`${name} exited with ${code}`));
      this.waiting.clear();
    });
  }

  get pid(): number {
    return this.proc.pid!;
  }

  request<T>(type: string, body: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
      // a child that has gone (stopped on Ctrl-C) fails the request instead of crashing the bench
      this.proc.send({ id, type, ...body }, (e) => {
        if (!e) return;
        this.waiting.delete(id);
        reject(new Error(`${this.name}: ${e.message}`));
      });
    });
  }

  /** Asks the child to stop, then signals it by its PID if it has not exited in time. */
  async stop(timeoutMs = 5000): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.proc.once('exit', () => r()));
    this.request('stop').catch(() => undefined);
    const timer = setTimeout(() => {
      try {
        process.kill(this.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }, timeoutMs);
    await exited;
    clearTimeout(timer);
  }
}
