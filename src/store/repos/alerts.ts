import type { alertMails } from '../schema/index.js';

export type AlertMail = typeof alertMails.$inferSelect;
export type AlertMailPatch = Partial<Pick<AlertMail, 'state' | 'attempts' | 'nextAttemptAt' | 'lockedUntil' | 'lastError' | 'recipients' | 'finishedAt'>>;
