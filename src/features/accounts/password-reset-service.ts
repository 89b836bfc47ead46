import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { FailureLimiter } from '../../lib/failure-limiter.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { hashPassword } from '../../lib/passwords.ts';
import type { Actor } from '../audit/audit.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { MailOutbox } from '../mail/mail-outbox.ts';
import { passwordResetMail } from '../mail/templates.ts';
import { checkPassword } from './accounts-service.ts';
import type { AccountsRepository } from './accounts.ts';
import type { AccountTokensRepository } from './account-tokens.ts';

/** DESIGN §15: a reset link works once, for one hour. */
export const RESET_TTL_MS = 3_600_000;
/** Reset requests per email, and per client address, in a window before 429 (each mails, so they are counted like failures). */
const REQUESTS_PER_EMAIL = 5;
const REQUESTS_PER_ADDRESS = 20;
const REQUEST_WINDOW_MS = 3_600_000;

export const resetLinkUnavailable = (): GatewayError =>
  new GatewayError('invalid_request', 'This reset link was already used or has expired; ask for a new one.', { param: 'token', codeA: 'invalid_token' });

/**
 * Forgotten passwords: a user asks by email and gets a single-use link valid one hour; the answer never tells whether the
 * address has an account. Using the link sets the password and signs the user out everywhere. Operators issue the same
 * link without mail (admin API, CLI), for gateways without a mail server.
 */
export class PasswordResetService {
  private readonly perEmail: FailureLimiter;
  private readonly perAddress: FailureLimiter;

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly tokens: AccountTokensRepository,
    private readonly mail: MailOutbox,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly options: { publicUrl: { base: string }; onError: (error: unknown) => void },
  ) {
    this.perEmail = new FailureLimiter(clock, REQUESTS_PER_EMAIL, REQUEST_WINDOW_MS);
    this.perAddress = new FailureLimiter(clock, REQUESTS_PER_ADDRESS, REQUEST_WINDOW_MS);
  }

  /** Mails a reset link when the address belongs to a user; the same answer (and no mail) when it does not. */
  async request(email: string, ip: string | null): Promise<void> {
    const normalized = email.trim().toLowerCase();
    const waitMs = Math.max(this.perEmail.blockedFor(normalized), ip ? this.perAddress.blockedFor(ip) : 0);
    if (waitMs > 0) throw new GatewayError('rate_limited', 'Too many password reset requests; try again later.', { codeA: 'rate_limit_exceeded', retryAfterMs: waitMs });
    this.perEmail.fail(normalized);
    if (ip) this.perAddress.fail(ip);
    const found = await this.accounts.findByEmail(normalized);
    if (!found?.user.email) return;
    // Answered before the link is written and queued, so a known address takes no longer to answer than an unknown one.
    void this.mailLink(found.user.id, found.user.email, ip).catch(this.options.onError);
  }

  private async mailLink(userId: string, email: string, ip: string | null): Promise<void> {
    const link = await this.issue(userId);
    await this.mail.queue({ kind: 'password_reset', to: email, ...passwordResetMail(link) });
    await this.audit.record({ type: 'user', id: userId, ip }, 'user.password_reset_request', { type: 'user', id: userId });
  }

  /** The operator's door: a reset link for the user, handed over by the operator (no mail). */
  async issueLink(userId: string, actor: Actor): Promise<{ url: string; expiresAt: number }> {
    const user = await this.accounts.getUser(userId);
    if (!user) throw new GatewayError('not_found', `User '${userId}' does not exist.`);
    if (!user.email) throw new GatewayError('invalid_request', 'This user has no email to sign in with; set one first.', { param: 'email' });
    const link = await this.issue(userId);
    await this.audit.record(actor, 'user.password_reset_link', { type: 'user', id: userId }, { after: { expiresAt: new Date(link.expiresAt).toISOString() } });
    return link;
  }

  /** Whether a link can still be used (the console's reset page asks before showing its form; asking does not use it). */
  async check(token: string): Promise<{ expiresAt: number }> {
    const found = token.length <= 200 ? await this.tokens.find(sha256Hex(token), 'password_reset') : undefined;
    if (!found || found.usedAt !== null || found.expiresAt <= this.clock.now()) throw resetLinkUnavailable();
    return { expiresAt: found.expiresAt };
  }

  /** Sets the new password with a link once; every session of the user ends. A used or expired link is a 400. */
  async confirm(token: string, password: string, ip: string | null): Promise<void> {
    checkPassword(password);
    if (token.length > 200) throw resetLinkUnavailable();
    const outcome = await this.tokens.resetPassword(sha256Hex(token), await hashPassword(password), this.clock.now());
    if (outcome.type !== 'used') throw resetLinkUnavailable();
    await this.audit.record({ type: 'user', id: outcome.token.userId, ip }, 'user.password_reset', { type: 'user', id: outcome.token.userId });
  }

  private async issue(userId: string): Promise<{ url: string; expiresAt: number }> {
    const token = `tgr-${randomBase62(40)}`;
    const now = this.clock.now();
    const expiresAt = now + RESET_TTL_MS;
    await this.tokens.insert(sha256Hex(token), { purpose: 'password_reset', userId, email: null, createdAt: now, expiresAt, usedAt: null });
    return { url: `${this.options.publicUrl.base.replace(/\/+$/, '')}/reset/${token}`, expiresAt };
  }
}
