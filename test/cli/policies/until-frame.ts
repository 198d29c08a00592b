/**
 * Waits until the latest frame of an ink screen passes `check`, failing with the frame after `ms`:
 * by default a deadline no busy machine reaches; a test that promises a latency passes its own.
 */
export async function until(frame: () => string | undefined, check: (f: string) => boolean, ms = 30_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const f = frame() ?? '';
    if (check(f)) return f;
    if (Date.now() > end) throw new Error(`the screen never showed what was expected within ${ms} ms; last frame:\n${f}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
