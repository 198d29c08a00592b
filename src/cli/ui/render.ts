/**
 * The one place commands start an ink screen. ink and react are loaded only here, when
 * a live screen is shown, so every other command starts without them.
 */
import type { ComponentType } from 'react';

/** Shows a component on the terminal until it exits (its own quit key, or Ctrl-C). */
export async function renderLive<P extends object>(component: ComponentType<P>, props: P): Promise<void> {
  const [{ render }, { createElement }] = await Promise.all([import('ink'), import('react')]);
  const app = render(createElement(component, props), { exitOnCtrlC: true, patchConsole: false });
  await app.waitUntilExit();
}
