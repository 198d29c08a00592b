/**
 * The connection pools a command opened (API clients, undici agents), closed when the command ends
 * (AgentpayCommand.finally): `agentpay` then exits when its work is done, not when the gateway or
 * undici closes the idle kept-alive connections (measured: 150 ms after every command against
 * `agentpay dev`, up to undici's 4 s against a gateway that keeps connections longer).
 */
interface Closable {
  close(): Promise<void>;
}

const open = new Set<Closable>();

/** `c`, to be closed when the command ends. */
export function closeAtEnd<T extends Closable>(c: T): T {
  open.add(c);
  return c;
}

/** Closes what the command opened, after the requests under way; a failure to close is not the command's. */
export async function closeOpened(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.allSettled(all.map((c) => c.close()));
}
