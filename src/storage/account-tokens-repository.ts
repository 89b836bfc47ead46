import type { Kysely, Transaction } from 'kysely';
import type { AccountToken, AccountTokenPurpose, AccountTokensRepository, TokenUseOutcome } from '../features/accounts/account-tokens.ts';
import type { AccountTokensTable, Database } from './schema.ts';

const toToken = (row: AccountTokensTable): AccountToken => ({
  purpose: row.purpose,
  userId: row.user_id,
  email: row.email,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  usedAt: row.used_at === null ? null : Number(row.used_at),
});

/** Single-use account links (migration 0022). Using one is an update guarded by `used_at is null`: one use wins. */
export class SqlAccountTokensRepository implements AccountTokensRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(tokenHash: string, token: AccountToken): Promise<void> {
    await this.db
      .insertInto('account_tokens')
      .values({ token_hash: tokenHash, purpose: token.purpose, user_id: token.userId, email: token.email, created_at: token.createdAt, expires_at: token.expiresAt, used_at: null })
      .execute();
  }

  async find(tokenHash: string, purpose: AccountTokenPurpose): Promise<AccountToken | undefined> {
    const row = await this.db.selectFrom('account_tokens').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose).executeTakeFirst();
    return row && toToken(row);
  }

  private async use(trx: Transaction<Database>, tokenHash: string, purpose: AccountTokenPurpose, now: number): Promise<AccountToken | undefined> {
    const row = await trx
      .updateTable('account_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('purpose', '=', purpose)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returningAll()
      .executeTakeFirst();
    return row && toToken(row);
  }

  async resetPassword(tokenHash: string, passwordHash: string, now: number): Promise<TokenUseOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const token = await this.use(trx, tokenHash, 'password_reset', now);
      if (!token) return { type: 'unavailable' };
      await trx.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', token.userId).execute();
      await trx.deleteFrom('sessions').where('user_id', '=', token.userId).execute();
      await trx.updateTable('account_tokens').set({ used_at: now }).where('user_id', '=', token.userId).where('purpose', '=', 'password_reset').where('used_at', 'is', null).execute();
      return { type: 'used', token };
    });
  }

  async changeEmail(tokenHash: string, now: number): Promise<TokenUseOutcome> {
    return this.db.transaction().execute(async (trx): Promise<TokenUseOutcome> => {
      const token = await this.use(trx, tokenHash, 'email_change', now);
      if (!token?.email) return { type: 'unavailable' };
      const holder = await trx.selectFrom('users').select('id').where('email', '=', token.email).executeTakeFirst();
      if (holder && holder.id !== token.userId) {
        // The link stays unused: nothing changed.
        throw new EmailTakenError();
      }
      await trx.updateTable('users').set({ email: token.email }).where('id', '=', token.userId).execute();
      return { type: 'used', token };
    }).catch((error: unknown) => {
      if (error instanceof EmailTakenError) return { type: 'email_taken' } satisfies TokenUseOutcome;
      throw error;
    });
  }
}

/** Rolls back the transaction that used an email-change link whose address was taken meanwhile. */
class EmailTakenError extends Error {}
