/**
 * `agentpay gateway start` with mail configured, as a real process: the SMTP URL from
 * AGENTPAY_SMTP_URL (where a password belongs: not in `ps`), the from address from
 * --mail-from; a signup's mail reaches a real SMTP server, and the password is in no output.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { outboxPath } from '../../../src/domain/platform/mailer.js';
import { AgentpayClient } from '../../../packages/sdk/src/client/index.js';
import { PASSWORD, startSmtp, USER } from '../../helpers/smtp.js';
import { cli, removeTempDirs, startGatewayProcess, tempDir } from '../helpers.js';

const configDir = tempDir();
afterAll(removeTempDirs);

describe('agentpay gateway start with --smtp-url', () => {
  it('sends a signup mail over SMTP and never prints the password', async () => {
    const smtp = await startSmtp();
    const dataDir = join(tempDir(), 'data');
    const gw = await startGatewayProcess(['gateway', 'start', '--json', '--port', '0', '--http-port', '0', '--data-dir', dataDir, '--mail-from', 'no-reply@agentpay.test', '--log-format', 'json'], {
      configDir,
      env: { AGENTPAY_SMTP_URL: `smtp://${USER}:${PASSWORD}@127.0.0.1:${smtp.port}` },
    });
    try {
      const client = new AgentpayClient({ gatewayUrl: gw.ready.baseUrl, ca: readFileSync(gw.ready.caCertPath!, 'utf8') });
      await client.signup.start({ kind: 'provider', name: 'Mail Seller', email: 'seller@mail.test', password: 'correct horse battery staple 42' });
      const [mail] = await smtp.arrived(1);
      expect(mail!.to).toEqual(['seller@mail.test']);
      expect(mail!.raw).toMatch(/waits for this verification token/);
      expect(existsSync(outboxPath(dataDir))).toBe(false);
    } finally {
      const { stdout, stderr } = await gw.stop();
      await smtp.close();
      expect(stderr).toContain('mail goes out over SMTP');
      expect(stdout + stderr).not.toContain(PASSWORD);
    }
  });

  it('refuses an SMTP URL without a from address, naming the variable, without repeating the URL', async () => {
    const r = await cli(['gateway', 'start', '--json', '--data-dir', join(tempDir(), 'data')], { configDir, env: { AGENTPAY_SMTP_URL: `smtp://${USER}:${PASSWORD}@127.0.0.1:25` } });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('AGENTPAY_SMTP_URL is set but no from address is');
    expect(r.stdout + r.stderr).not.toContain(PASSWORD);
  });
});
