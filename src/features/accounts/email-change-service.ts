import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { verifyPassword } from '../../lib/passwords.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';
import type { MailOutbox } from '../mail/mail-outbox.ts';
import { emailChangedMail, emailChangeMail } from '../mail/templates.ts';
import type { AccountsRepository } from './accounts.ts';
import type { AccountTokensRepository } from './account-tokens.ts';

/** How long a confirmation link of a new email works (DESIGN leaves it open: a day, so it survives a slow inbox). */
export const EMAIL_CHANGE_TTL_MS = 24 * 3_600_000;

const emailTaken = (email: string): GatewayError => new GatewayError('conflict', `email: '${email}' is already registered`, { param: 'email' });

/**
 * A user changes their sign-in email in two steps: asking (with the current password) mails a single-use link to the NEW
 * address; only opening it changes the email, and the OLD address is told. Until then the old email keeps signing in.
 */
export class EmailChangeService {
  constructor(
    private readonly accounts: AccountsRepository,
    private readonly tokens: AccountTokensRepository,
    private readonly mail: MailOutbox,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly options: { publicUrl: { base: string } },
  ) {}

  /** Checks the current password and mails the confirmation link; answers the pending address and when its link expires. */
  async request(actor: Actor & { id: string }, input: { email: string; currentPassword: string | undefined }): Promise<{ email: string; expiresAt: number }> {
    const email = input.email.trim().toLowerCase();
    const stored = await this.accounts.passwordHash(actor.id);
    if (!stored || input.currentPassword === undefined || !(await verifyPassword(stored, input.currentPassword))) {
      throw new GatewayError('forbidden', 'currentPassword: is not your current password', { param: 'currentPassword' });
    }
    const user = await this.accounts.getUser(actor.id);
    if (user?.email === email) throw new GatewayError('invalid_request', 'email: is already your email', { param: 'email' });
    const holder = await this.accounts.findByEmail(email);
    if (holder) throw emailTaken(email);
    if (!this.mail.enabled) throw new GatewayError('conflict', 'This gateway sends no mail, so a new email cannot be confirmed; ask the operator to change it.', { codeA: 'mail_disabled' });
    const token = `tge-${randomBase62(40)}`;
    const now = this.clock.now();
    const expiresAt = now + EMAIL_CHANGE_TTL_MS;
    await this.tokens.insert(sha256Hex(token), { purpose: 'email_change', userId: actor.id, email, createdAt: now, expiresAt, usedAt: null });
    const url = `${this.options.publicUrl.base.replace(/\/+$/, '')}/confirm-email/${token}`;
    await this.mail.queue({ kind: 'email_change', to: email, ...emailChangeMail({ url, email, expiresAt }) });
    await this.audit.record(actor, 'user.email_change_request', { type: 'user', id: actor.id }, { after: { email } });
    return { email, expiresAt };
  }

  /** Makes the link's address the user's email, once; the old address is told. Used or expired → 400; taken meanwhile → 409. */
  async confirm(token: string, ip: string | null): Promise<{ userId: string; email: string }> {
    const before = token.length <= 200 ? await this.tokens.find(sha256Hex(token), 'email_change') : undefined;
    const previous = before && (await this.accounts.getUser(before.userId))?.email;
    const outcome = token.length <= 200 ? await this.tokens.changeEmail(sha256Hex(token), this.clock.now()) : { type: 'unavailable' as const };
    if (outcome.type === 'email_taken') throw emailTaken(before?.email ?? '');
    if (outcome.type !== 'used' || !outcome.token.email) {
      throw new GatewayError('invalid_request', 'This confirmation link was already used or has expired.', { param: 'token', codeA: 'invalid_token' });
    }
    const { userId, email } = { userId: outcome.token.userId, email: outcome.token.email };
    if (previous && previous !== email) await this.mail.queue({ kind: 'email_changed', to: previous, ...emailChangedMail({ email }) });
    await this.audit.record({ type: 'user', id: userId, ip }, 'user.email_change', { type: 'user', id: userId }, { before: { email: previous ?? null }, after: { email } });
    return { userId, email };
  }
}
