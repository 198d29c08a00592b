/**
 * The one place commands start an ink screen. ink and react are loaded only here, when
 * a live screen is shown, so every other command starts without them.
 */
import type { ComponentType } from 'react';

/** The width a screen is laid out for when the terminal does not say. */
export const FALLBACK_COLUMNS = 80;

/**
 * `stream` as ink should see it: some CI ptys report 0 columns (or none), and ink then lays the
 * screen out 0 wide, one character per line (its own fallback asks the same pty and gets 0 too).
 * Such a stream is shown through a view whose `columns` is FALLBACK_COLUMNS until the terminal
 * reports a real width; everything else is the stream itself.
 */
export function withColumns<S extends NodeJS.WriteStream>(stream: S): S {
  if (stream.columns > 0) return stream;
  return new Proxy(stream, {
    get(target, prop) {
      if (prop === 'columns') return target.columns > 0 ? target.columns : FALLBACK_COLUMNS;
      const value: unknown = Reflect.get(target, prop, target);
      // methods run on the stream itself (its internal state, listeners added and removed)
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The terminal a screen draws on; tests pass their own streams. */
export interface LiveTerminal {
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  stderr?: NodeJS.WriteStream;
}

/** Shows a component on the terminal until it exits (its own quit key, or Ctrl-C). */
export async function renderLive<P extends object>(component: ComponentType<P>, props: P, terminal: LiveTerminal = {}): Promise<void> {
  const [{ render }, { createElement }] = await Promise.all([import('ink'), import('react')]);
  const app = render(createElement(component, props), {
    stdout: withColumns(terminal.stdout ?? process.stdout),
    ...(terminal.stdin ? { stdin: terminal.stdin } : {}),
    ...(terminal.stderr ? { stderr: terminal.stderr } : {}),
    exitOnCtrlC: true,
    patchConsole: false,
  });
  await app.waitUntilExit();
}
