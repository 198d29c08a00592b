/**
 * A real SMTP server for tests (smtp-server on 127.0.0.1, a random port unless given):
 * it wants USER/PASSWORD (over plain SMTP, no STARTTLS) and keeps what it receives.
 */
import net, { type AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export const USER = 'mailer';
export const PASSWORD = 'sm7p-S3cret-pw';

export interface Received {
  from: string;
  to: string[];
  raw: string;
}

export interface TestSmtp {
  port: number;
  received: Received[];
  /** resolves once `n` messages have arrived */
  arrived(n: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 that wants USER/PASSWORD and keeps what it receives; `reject` answers 550 to every recipient. */
export async function startSmtp(port = 0, opts: { reject?: boolean } = {}): Promise<TestSmtp> {
  const received: Received[] = [];
  const waiters: Array<() => void> = [];
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.username === USER && auth.password === PASSWORD) return cb(null, { user: USER });
      return cb(new Error('bad credentials'));
    },
    onRcptTo(_address, _session, cb) {
      if (opts.reject) return cb(Object.assign(new Error('no such mailbox'), { responseCode: 550 }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          // quoted-printable soft line breaks undone, so a token reads whole
          raw: Buffer.concat(chunks).toString('utf8').replace(/=\r\n/g, ''),
        });
        for (const w of waiters.splice(0)) w();
        cb();
      });
    },
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(port, '127.0.0.1', () => res());
  });
  const smtp: TestSmtp = {
    port: (server.server.address() as AddressInfo).port,
    received,
    arrived: (n) =>
      new Promise((res) => {
        const check = () => (received.length >= n ? res(received) : waiters.push(check));
        check();
      }),
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
  return smtp;
}

/** A loopback port nothing listens on (yet): connections to it are refused. */
export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

