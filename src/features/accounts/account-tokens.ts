/** What a single-use account link does. */
export type AccountTokenPurpose = 'password_reset' | 'email_change';

/** A single-use link of an account; the token is shown once (in the link), only its SHA-256 is stored. */
export interface AccountToken {
  purpose: AccountTokenPurpose;
  userId: string;
  /** The new address of an email change; null for a password reset. */
  email: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
}

/** `unavailable`: unknown, already used or expired; `email_taken`: the new address was registered meanwhile. */
export type TokenUseOutcome = { type: 'used'; token: AccountToken } | { type: 'unavailable' } | { type: 'email_taken' };

export interface AccountTokensRepository {
  insert(tokenHash: string, token: AccountToken): Promise<void>;
  find(tokenHash: string, purpose: AccountTokenPurpose): Promise<AccountToken | undefined>;
  /**
   * In one transaction: uses the token if it is unused and unexpired, sets the password, ends every session of the user and
   * retires the user's other reset links. Two uses of one token set the password once.
   */
  resetPassword(tokenHash: string, passwordHash: string, now: number): Promise<TokenUseOutcome>;
  /** In one transaction: uses the token if it is unused and unexpired and makes its address the user's email (unless taken). */
  changeEmail(tokenHash: string, now: number): Promise<TokenUseOutcome>;
}
