/**
 * Old names of settings, still accepted (docs/configuration.md). Each old name used says so
 * once per process with one `console.warn` line: the person who wrote the old name sees it in
 * the console they already watch, without a new option to wire; once, because clients are
 * made per request in some code (a notice per call would drown the log). No Node imports:
 * this runs in browsers and edge runtimes too.
 */
const told = new Set<string>();

/** Warns (once per process) that `oldName` is an old name of `newName`. */
export function oldNameNotice(oldName: string, newName: string): void {
  if (told.has(oldName)) return;
  told.add(oldName);
  console.warn(`agentpay-sdk: the option "${oldName}" is an old name of "${newName}"; it still works, but use "${newName}"`);
}

/** For tests: forget which notices were given. */
export function resetOldNameNotices(): void {
  told.clear();
}
