/**
 * The mail settings of a gateway (`--smtp-url`, `--mail-from`), checked at boot, and the
 * one way the SMTP URL is ever shown: with its password replaced. No nodemailer here, so
 * the CLI can check settings without loading it.
 */

/** The gateway's mail settings; without them mail goes to DATA_DIR/outbox.jsonl. */
export interface MailConfig {
  /** smtp://[user:password@]host[:port] (STARTTLS when the server offers it) or smtps://… (TLS from the start) */
  smtpUrl: string;
  /** the From address, e.g. "Agentpay <no-reply@example.com>" */
  from: string;
}

/** Why `smtpUrl` cannot be used, or undefined when it can. Never quotes the URL (it may hold a password). */
export function smtpUrlProblem(smtpUrl: string): string | undefined {
  let u: URL;
  try {
    u = new URL(smtpUrl);
  } catch {
    return 'is not a URL; give smtp://[user:password@]host[:port] (or smtps:// for TLS from the start)';
  }
  if (u.protocol !== 'smtp:' && u.protocol !== 'smtps:') return `must start with smtp:// or smtps://, not ${u.protocol}//`;
  if (!u.hostname) return 'names no host; give smtp://[user:password@]host[:port]';
  return undefined;
}

/** A from address as nodemailer takes it: `ops@example.com` or `Agentpay <ops@example.com>`. */
export function mailFromProblem(from: string): string | undefined {
  return /^[^\s@<>]+@[^\s@<>]+$|^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(from.trim()) ? undefined : 'must be an email address, e.g. agentpay@example.com or "Agentpay <agentpay@example.com>"';
}

/** The URL as it may be shown: the password (and any query, which may hold one) replaced. */
export function redactSmtpUrl(smtpUrl: string): string {
  try {
    const u = new URL(smtpUrl);
    if (u.password) u.password = '[redacted]';
    if (u.search) u.search = '?[redacted]';
    return u.toString().replace('%5Bredacted%5D', '[redacted]').replace('%5Bredacted%5D', '[redacted]');
  } catch {
    return '[an SMTP URL]';
  }
}

/** `text` with every form of the URL's password taken out. */
export function scrubSecret(text: string, smtpUrl: string): string {
  let password: string;
  try {
    password = new URL(smtpUrl).password;
  } catch {
    return text;
  }
  if (!password) return text;
  let out = text;
  for (const form of new Set([password, decodeURIComponent(password)])) if (form) out = out.split(form).join('[redacted]');
  return out;
}

