import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { FailureLimiter } from '../../lib/failure-limiter.ts';
import { constantTimeEqual, sha256Hex } from '../../lib/hashing.ts';
import { randomBase62 } from '../../lib/ids.ts';
import { decoyHash, verifyPassword } from '../../lib/passwords.ts';
import type { AccountsRepository, User } from './accounts.ts';
import type { Session, SessionsRepository } from './sessions.ts';

/** DESIGN §10: 30-day sliding expiry. */
export const SESSION_TTL_MS = 30 * 24 * 3_600_000;
/** The expiry is moved forward at most this often (a write per request would put the database on every console call). */
const TOUCH_AFTER_MS = 3_600_000;
/** Failed sign-ins per email in a window before 429. */
const FAILURES_PER_EMAIL = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;

/** One signed-in browser: who, and the CSRF token its state-changing requests must carry. */
export interface SignedIn {
  user: User;
  session: Session;
}

/**
 * Sign-in with email and password, sessions kept in the database (revocable), CSRF tokens. A wrong email and a wrong
 * password get the same answer and take the same time; repeated failures for one email are refused for a while.
 */
export class SessionsService {
  private readonly failures: FailureLimiter;

  constructor(
    private readonly accounts: AccountsRepository,
    private readonly sessions: SessionsRepository,
    private readonly clock: Clock,
  ) {
    this.failures = new FailureLimiter(clock, FAILURES_PER_EMAIL, FAILURE_WINDOW_MS);
  }

  /** Checks the password and opens a session; returns the cookie token (shown only here) with the session. */
  async login(email: string, password: string): Promise<SignedIn & { token: string }> {
    const normalized = email.trim().toLowerCase();
    const waitMs = this.failures.blockedFor(normalized);
    if (waitMs > 0) {
      throw new GatewayError('rate_limited', 'Too many failed sign-ins for this email; try again later.', { codeA: 'rate_limit_exceeded', retryAfterMs: waitMs });
    }
    const found = await this.accounts.findByEmail(normalized);
    const matches = await verifyPassword(found?.passwordHash ?? (await decoyHash()), password);
    if (!found || !found.passwordHash || !matches) {
      this.failures.fail(normalized);
      throw new GatewayError('unauthorized', 'Wrong email or password.');
    }
    return this.open(found.user);
  }

  /** Opens a session for a user who has just proven who they are (sign-in, sign-up, accepted invitation). */
  async open(user: User): Promise<SignedIn & { token: string }> {
    const token = randomBase62(43);
    const now = this.clock.now();
    const session: Session = { id: sha256Hex(token), userId: user.id, csrfToken: randomBase62(32), createdAt: now, expiresAt: now + SESSION_TTL_MS };
    await this.sessions.insert(session);
    return { token, user, session };
  }

  /** The signed-in user for a cookie token, or undefined (unknown, expired, signed out). Slides the expiry. */
  async authenticate(token: string): Promise<SignedIn | undefined> {
    if (token.length < 20 || token.length > 100) return undefined;
    const session = await this.sessions.get(sha256Hex(token));
    const now = this.clock.now();
    if (!session || session.expiresAt <= now) return undefined;
    const user = await this.accounts.getUser(session.userId);
    if (!user) return undefined;
    if (session.expiresAt - now < SESSION_TTL_MS - TOUCH_AFTER_MS) {
      session.expiresAt = now + SESSION_TTL_MS;
      await this.sessions.touch(session.id, session.expiresAt);
    }
    return { user, session };
  }

  /** Whether a state-changing request carries the session's CSRF token. */
  csrfMatches(session: Session, header: string | undefined): boolean {
    return header !== undefined && constantTimeEqual(header, session.csrfToken);
  }

  async logout(token: string): Promise<void> {
    await this.sessions.delete(sha256Hex(token));
  }

  /** Ends every other session of the user (after a password change). */
  async endOtherSessions(userId: string, keep: Session | undefined): Promise<void> {
    await this.sessions.deleteForUser(userId, keep?.id);
  }
}
