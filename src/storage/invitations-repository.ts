import type { Kysely, Selectable } from 'kysely';
import type { AcceptOutcome, Acceptor, Invitation, InvitationsRepository } from '../features/accounts/invitations.ts';
import { insertUser } from './accounts-repository.ts';
import type { Database, InvitationsTable } from './schema.ts';

const toInvitation = (row: Selectable<InvitationsTable>): Invitation => ({
  id: row.id,
  orgId: row.org_id,
  email: row.email,
  role: row.role,
  invitedBy: row.invited_by,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  acceptedAt: row.accepted_at === null ? null : Number(row.accepted_at),
  acceptedBy: row.accepted_by,
  revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
});

export class SqlInvitationsRepository implements InvitationsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(invitation: Invitation, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('invitations')
      .values({
        id: invitation.id,
        org_id: invitation.orgId,
        email: invitation.email,
        role: invitation.role,
        token_hash: tokenHash,
        invited_by: invitation.invitedBy,
        created_at: invitation.createdAt,
        expires_at: invitation.expiresAt,
        accepted_at: null,
        accepted_by: null,
        revoked_at: null,
      })
      .execute();
  }

  async get(id: string): Promise<Invitation | undefined> {
    const row = await this.db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toInvitation(row);
  }

  async byTokenHash(tokenHash: string): Promise<Invitation | undefined> {
    const row = await this.db.selectFrom('invitations').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
    return row && toInvitation(row);
  }

  async list(orgId: string, limit: number, after: string | undefined): Promise<Invitation[]> {
    let select = this.db.selectFrom('invitations').selectAll().where('org_id', '=', orgId);
    if (after !== undefined) select = select.where('id', '<', after);
    const rows = await select.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toInvitation);
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const result = await this.db.updateTable('invitations').set({ revoked_at: now }).where('id', '=', id).where('accepted_at', 'is', null).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async accept(invitation: Invitation, acceptor: Acceptor, now: number): Promise<AcceptOutcome> {
    return this.db.transaction().execute(async (trx) => {
      const member = await trx.selectFrom('org_members').select('role').where('org_id', '=', invitation.orgId).where('user_id', '=', acceptor.userId).executeTakeFirst();
      if (member) return 'already_member';
      // The conditional update is the claim: of two concurrent accepts, one updates the row and the other finds it taken.
      const claimed = await trx
        .updateTable('invitations')
        .set({ accepted_at: now, accepted_by: acceptor.userId })
        .where('id', '=', invitation.id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) return 'unavailable';
      if (acceptor.newUser) await insertUser(trx, acceptor.newUser, now);
      await trx.insertInto('org_members').values({ org_id: invitation.orgId, user_id: acceptor.userId, role: invitation.role }).execute();
      return 'accepted';
    });
  }
}
