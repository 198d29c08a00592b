/**
 * Sending one message over SMTP with nodemailer: the transport behind `MailSpool` when a
 * gateway is given `--smtp-url`. The URL may carry a user and password
 * (`smtp://user:pass@host:587`, `smtps://…` for implicit TLS); it is only ever shown
 * through `redactSmtpUrl`, and any error text is scrubbed of the password before it is
 * logged or kept.
 */
import nodemailer from 'nodemailer';

/** What the spool hands a transport: one rendered message. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
}

export interface MailTransport {
  send(mail: OutgoingMail): Promise<void>;
  close(): void;
}

export class SmtpTransport implements MailTransport {
  private readonly transporter: ReturnType<typeof nodemailer.createTransport>;

  constructor(smtpUrl: string) {
    // short timeouts: a server that does not answer is retried later, like one that refuses
    this.transporter = nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 15_000, greetingTimeout: 15_000, socketTimeout: 60_000 });
  }

  async send(mail: OutgoingMail): Promise<void> {
    await this.transporter.sendMail(mail);
  }

  close(): void {
    this.transporter.close();
  }
}
