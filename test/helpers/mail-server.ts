import type { AddressInfo } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** A local mail server for tests: every message it takes is parsed (mailparser) and kept, in order. */
export interface TestMailServer {
  /** `smtp://127.0.0.1:<port>`: stays the same across stop() and start(). */
  url: string;
  messages: ParsedMail[];
  /** Messages sent to this address (case-insensitive). */
  to(address: string): ParsedMail[];
  /** Stops listening, as a mail server that went down. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startMailServer(): Promise<TestMailServer> {
  const messages: ParsedMail[] = [];
  let server: SMTPServer | undefined;
  let port = 0;
  const listen = async (): Promise<void> => {
    const created = new SMTPServer({
      authOptional: true,
      // Plain SMTP on a loopback port: no certificate to make, and nodemailer does not try to upgrade.
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, callback) {
        simpleParser(stream)
          .then((parsed) => {
            messages.push(parsed);
            callback();
          })
          .catch((error: Error) => callback(error));
      },
    });
    await new Promise<void>((resolve, reject) => {
      created.once('error', reject);
      created.listen(port, '127.0.0.1', () => resolve());
    });
    port = (created.server.address() as AddressInfo).port;
    server = created;
  };
  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };
  await listen();
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    to: (address) => messages.filter((message) => addressesOf(message).includes(address.toLowerCase())),
    stop,
    start: listen,
    close: stop,
  };
}

export function addressesOf(message: ParsedMail): string[] {
  const fields = Array.isArray(message.to) ? message.to : message.to ? [message.to] : [];
  return fields.flatMap((field) => field.value.map((entry) => (entry.address ?? '').toLowerCase()));
}

/** The first link in the message's plain text whose path starts with `path` (`/reset/`), and the token after it. */
export function linkIn(message: ParsedMail, path: string): { url: string; token: string } {
  const match = new RegExp(`(https?://\\S+?${path.replace(/\//g, '\\/')})(\\S+)`).exec(message.text ?? '');
  if (!match) throw new Error(`no ${path} link in: ${message.text}`);
  return { url: `${match[1]}${match[2]}`, token: match[2]! };
}
