import { createRequire } from 'node:module';
import type * as Nodemailer from 'nodemailer';
import type { MailTransport } from './mail.ts';

/** A server that does not answer within these times has failed the attempt; the job tries again later. */
const CONNECTION_TIMEOUT_MS = 10_000;
const SOCKET_TIMEOUT_MS = 30_000;

/**
 * Sends over SMTP with nodemailer (TOLLGATE_SMTP_URL: `smtp://user:pass@host:587` upgrades with STARTTLS when the server
 * offers it, `smtps://…:465` is TLS from the start). One connection per message: mail is rare and a pooled connection that
 * went stale while the server was away would only add a failure.
 */
export function smtpTransport(url: string): MailTransport {
  // Loaded only by a gateway that sends mail: a static import held ~15 MB of RSS in every process.
  const { createTransport } = createRequire(import.meta.url)('nodemailer') as typeof Nodemailer;
  const transporter = createTransport({ url, connectionTimeout: CONNECTION_TIMEOUT_MS, greetingTimeout: CONNECTION_TIMEOUT_MS, socketTimeout: SOCKET_TIMEOUT_MS });
  return {
    async send(message) {
      await transporter.sendMail({ from: message.from, to: message.to, subject: message.subject, text: message.text, html: message.html, messageId: message.messageId });
    },
    close() {
      transporter.close();
    },
  };
}
