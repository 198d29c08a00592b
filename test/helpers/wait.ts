/**
 * Waiting in tests on what happens, not on time: `until` polls a condition and fails, naming what
 * it waited for, only after a generous deadline, so a busy machine makes a test slower, never red.
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, { limitMs = 30_000, everyMs = 20 } = {}): Promise<void> {
  const end = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`gave up waiting ${limitMs} ms for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
