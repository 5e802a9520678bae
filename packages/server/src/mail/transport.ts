import type nodemailer from 'nodemailer';
import { requireLazily } from '../lib/lazy.js';

export interface OutgoingMessage {
  /** Exactly one recipient: the stored canonical address. */
  to: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailTransport {
  readonly name: string;
  send(message: OutgoingMessage): Promise<void>;
  close(): void;
}

export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly transporter: nodemailer.Transporter;

  constructor(
    url: string,
    private readonly from: string,
  ) {
    // Bounded timeouts keep every attempt well inside the worker's claim (60 s), so a slow server
    // can never make two workers hold the same message.
    const { createTransport } = requireLazily('nodemailer') as typeof nodemailer;
    this.transporter = createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  }

  async send(message: OutgoingMessage): Promise<void> {
    await this.transporter.sendMail({
      from: this.from,
      to: message.to,
      // An explicit envelope: the SMTP RCPT TO is exactly this address, never parsed from headers.
      envelope: { from: this.from, to: [message.to] },
      subject: message.subject,
      text: message.text,
      html: message.html,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  close(): void {
    this.transporter.close();
  }
}

/** Production with no SMTP_URL: every attempt fails visibly, so nothing is silently dropped. */
export class UnconfiguredTransport implements MailTransport {
  readonly name = 'unconfigured';
  async send(): Promise<void> {
    throw new Error(
      'SMTP_URL is not configured, so production email cannot be delivered. Set SMTP_URL and restart; pending messages will then be sent.',
    );
  }
  close(): void {}
}
