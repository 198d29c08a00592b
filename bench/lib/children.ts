/**
 * The bench's child processes (gateways, sellers, buyers), started and stopped by their PIDs, in
 * one registry per bench script (run.ts, sessions.ts, gateway-alone.ts):
 * - every child started is kept until it is stopped, so Ctrl-C (SIGINT) or SIGTERM stops them all,
 *   then runs the script's own clean-up (dropping the configuration's PostgreSQL database) and
 *   exits 130;
 * - a configuration's children form a group, stopped together when the configuration ends and
 *   then forgotten by the registry;
 * - `stopAll()` at the end of the script stops whatever is left, once.
 */
import { Child } from './ipc.js';

export interface ChildRegistryOptions {
  /** what the signal's message says is being stopped ("the bench processes") */
  what: string;
  /** after the children stopped on a signal, before exiting: the script's clean-up */
  onSignal?: () => Promise<unknown> | unknown;
}

export class ChildRegistry {
  private readonly live: Child[] = [];
  private stopping: Promise<void> | undefined;

  constructor(opts: ChildRegistryOptions) {
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.on(sig, () => {
        console.error(`\n${sig}: stopping ${opts.what}`);
        void this.stopAll().then(() => opts.onSignal?.()).catch(() => undefined).finally(() => process.exit(130));
      });
    }
  }

  /** Starts `script` (TypeScript, through tsx) as a child with IPC (lib/ipc.ts), kept until it is stopped. */
  spawn(name: string, script: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Child {
    const c = new Child(name, script, env, nodeArgs);
    this.live.push(c);
    return c;
  }

  /** Stops every child still kept; called again, it answers the same stop. */
  stopAll(): Promise<void> {
    return (this.stopping ??= Promise.all(this.live.map((c) => c.stop())).then(() => undefined));
  }

  /**
   * A bench's whole run: `main` (true when every check passed), every child stopped afterwards, and the
   * process ended with 0 when it passed, 1 when it did not or threw (`what failed:` and the error).
   */
  async runMain(what: string, main: () => Promise<boolean>): Promise<never> {
    let ok = false;
    try {
      ok = await main();
    } catch (e) {
      console.error(`${what} failed:`, e);
    } finally {
      await this.stopAll();
    }
    process.exit(ok ? 0 : 1);
  }

  /** The children of one configuration, stopped together at its end (group.stop() in its finally). */
  group(): ChildGroup {
    return new ChildGroup(this.live);
  }
}

export class ChildGroup {
  private readonly mine: Child[] = [];

  constructor(private readonly live: Child[]) {}

  /** Counts `c` (started with the registry's spawn) in this group; returns it. */
  own(c: Child): Child {
    this.mine.push(c);
    return c;
  }

  /** The group's children, in the order they were owned. */
  get children(): readonly Child[] {
    return this.mine;
  }

  /** Stops the group's children and forgets them, in the group and in the registry. */
  async stop(): Promise<void> {
    await Promise.all(this.mine.map((x) => x.stop()));
    for (const x of this.mine) {
      const i = this.live.indexOf(x);
      if (i >= 0) this.live.splice(i, 1);
    }
    this.mine.length = 0;
  }
}
