import type { Kysely } from 'kysely';
import type { Session, SessionsRepository } from '../features/accounts/sessions.ts';
import type { Database } from './schema.ts';

export class SqlSessionsRepository implements SessionsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(session: Session): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({ id: session.id, user_id: session.userId, csrf_token: session.csrfToken, created_at: session.createdAt, expires_at: session.expiresAt })
      .execute();
  }

  async get(id: string): Promise<Session | undefined> {
    const row = await this.db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, userId: row.user_id, csrfToken: row.csrf_token, createdAt: Number(row.created_at), expiresAt: Number(row.expires_at) };
  }

  async touch(id: string, expiresAt: number): Promise<void> {
    await this.db.updateTable('sessions').set({ expires_at: expiresAt }).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('sessions').where('id', '=', id).execute();
  }

  async deleteForUser(userId: string, exceptId?: string): Promise<void> {
    let query = this.db.deleteFrom('sessions').where('user_id', '=', userId);
    if (exceptId !== undefined) query = query.where('id', '<>', exceptId);
    await query.execute();
  }
}
