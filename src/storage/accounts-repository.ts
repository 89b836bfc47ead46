import type { Kysely, Transaction } from 'kysely';
import { GatewayError } from '../core/errors.ts';
import type { AccountRef, AccountsRepository, MemberChange, MemberChangeOutcome, NewUser, Org, OrgMember, Role, User } from '../features/accounts/accounts.ts';
import { moneyText, moneyTextOrNull } from './money-sql.ts';
import type { Money } from '../lib/money.ts';
import type { Database } from './schema.ts';

const USER_COLUMNS = ['id', 'name', 'email', 'operator', moneyText('balance_nano').as('balance')] as const;
const toUser = (row: { id: string; name: string; email: string | null; operator: number; balance: string }): User => ({
  id: row.id,
  name: row.name,
  balance: BigInt(row.balance),
  email: row.email,
  operator: row.operator === 1,
});

/** Inserts a user (also inside another transaction: an accepted invitation creates its user); a taken email is a 409. */
export async function insertUser(db: Kysely<Database> | Transaction<Database>, user: NewUser, createdAt: number): Promise<void> {
  if (user.email) {
    const taken = await db.selectFrom('users').select('id').where('email', '=', user.email.toLowerCase()).executeTakeFirst();
    if (taken) throw new GatewayError('conflict', `email: '${user.email}' is already registered`, { param: 'email' });
  }
  await db
    .insertInto('users')
    .values({ id: user.id, name: user.name, balance_nano: 0n, created_at: createdAt, email: user.email?.toLowerCase() ?? null, password_hash: user.passwordHash ?? null, operator: user.operator ? 1 : 0 })
    .execute();
}

export class SqlAccountsRepository implements AccountsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async createUser(user: NewUser, createdAt: number): Promise<void> {
    await insertUser(this.db, user, createdAt);
  }

  async getUser(id: string): Promise<User | undefined> {
    const row = await this.db.selectFrom('users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toUser(row);
  }

  async findByEmail(email: string): Promise<{ user: User; passwordHash: string | null } | undefined> {
    const row = await this.db.selectFrom('users').select([...USER_COLUMNS, 'password_hash']).where('email', '=', email.toLowerCase()).executeTakeFirst();
    return row && { user: toUser(row), passwordHash: row.password_hash };
  }

  async passwordHash(userId: string): Promise<string | null | undefined> {
    const row = await this.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
    return row?.password_hash;
  }

  async updateUser(id: string, changes: { name?: string; passwordHash?: string; email?: string | null; operator?: boolean }): Promise<void> {
    const values: { name?: string; password_hash?: string; email?: string | null; operator?: number } = {};
    if (changes.name !== undefined) values.name = changes.name;
    if (changes.passwordHash !== undefined) values.password_hash = changes.passwordHash;
    if (changes.email !== undefined) values.email = changes.email;
    if (changes.operator !== undefined) values.operator = changes.operator ? 1 : 0;
    if (Object.keys(values).length > 0) await this.db.updateTable('users').set(values).where('id', '=', id).execute();
  }

  async lowBalanceAlert(account: AccountRef): Promise<Money | null | undefined> {
    const row = await this.db
      .selectFrom(account.type === 'user' ? 'users' : 'orgs')
      .select(moneyTextOrNull('low_balance_alert_nano').as('alert'))
      .where('id', '=', account.id)
      .executeTakeFirst();
    return row && (row.alert === null ? null : BigInt(row.alert));
  }

  async setLowBalanceAlert(account: AccountRef, threshold: Money | null): Promise<void> {
    await this.db
      .updateTable(account.type === 'user' ? 'users' : 'orgs')
      .set({ low_balance_alert_nano: threshold })
      .where('id', '=', account.id)
      .execute();
  }

  async createOrg(org: { id: string; name: string; ownerId: string; promptCaching: boolean }, createdAt: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('orgs')
        .values({ id: org.id, name: org.name, owner_id: org.ownerId, balance_nano: 0n, prompt_caching: org.promptCaching ? 1 : 0, created_at: createdAt })
        .execute();
      await trx.insertInto('org_members').values({ org_id: org.id, user_id: org.ownerId, role: 'owner' }).execute();
    });
  }

  async getOrg(id: string): Promise<Org | undefined> {
    const row = await this.db
      .selectFrom('orgs')
      .select(['id', 'name', 'owner_id', 'prompt_caching', moneyText('balance_nano').as('balance')])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && { id: row.id, name: row.name, ownerId: row.owner_id, promptCaching: row.prompt_caching === 1, balance: BigInt(row.balance) };
  }

  async updateOrg(id: string, changes: { name?: string; promptCaching?: boolean }): Promise<Org | undefined> {
    const values: { name?: string; prompt_caching?: number } = {};
    if (changes.name !== undefined) values.name = changes.name;
    if (changes.promptCaching !== undefined) values.prompt_caching = changes.promptCaching ? 1 : 0;
    if (Object.keys(values).length > 0) await this.db.updateTable('orgs').set(values).where('id', '=', id).execute();
    return this.getOrg(id);
  }

  async setMember(orgId: string, userId: string, role: Role): Promise<void> {
    await this.db
      .insertInto('org_members')
      .values({ org_id: orgId, user_id: userId, role })
      .onConflict((conflict) => conflict.columns(['org_id', 'user_id']).doUpdateSet({ role }))
      .execute();
  }

  async getRole(orgId: string, userId: string): Promise<Role | undefined> {
    const row = await this.db.selectFrom('org_members').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
    return row?.role;
  }

  async members(orgId: string): Promise<OrgMember[]> {
    const rows = await this.db
      .selectFrom('org_members')
      .innerJoin('users', 'users.id', 'org_members.user_id')
      .select(['users.id', 'users.email', 'users.name', 'org_members.role'])
      .where('org_members.org_id', '=', orgId)
      .orderBy('users.id')
      .execute();
    return rows.map((row) => ({ userId: row.id, email: row.email, name: row.name, role: row.role }));
  }

  /**
   * Changes or ends a membership unless it would leave the org without an owner. The org row is locked first (a no-op update),
   * so two owners demoting each other at once are serialised and the second sees the first's change.
   */
  async changeMember(orgId: string, userId: string, change: MemberChange): Promise<MemberChangeOutcome> {
    return this.db.transaction().execute(async (trx) => {
      await trx.updateTable('orgs').set((eb) => ({ owner_id: eb.ref('owner_id') })).where('id', '=', orgId).execute();
      const current = await trx.selectFrom('org_members').select('role').where('org_id', '=', orgId).where('user_id', '=', userId).executeTakeFirst();
      if (!current) return 'not_member';
      const losesOwner = current.role === 'owner' && (change.role === null || change.role !== 'owner');
      if (losesOwner) {
        const owners = await trx.selectFrom('org_members').select('user_id').where('org_id', '=', orgId).where('role', '=', 'owner').execute();
        const others = owners.map((row) => row.user_id).filter((id) => id !== userId);
        if (others.length === 0) return 'last_owner';
        await trx.updateTable('orgs').set({ owner_id: others[0]! }).where('id', '=', orgId).where('owner_id', '=', userId).execute();
      }
      if (change.role === null) await trx.deleteFrom('org_members').where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      else await trx.updateTable('org_members').set({ role: change.role }).where('org_id', '=', orgId).where('user_id', '=', userId).execute();
      return 'changed';
    });
  }

  async membershipsOf(userId: string): Promise<Array<{ orgId: string; role: Role }>> {
    const rows = await this.db.selectFrom('org_members').select(['org_id', 'role']).where('user_id', '=', userId).execute();
    return rows.map((row) => ({ orgId: row.org_id, role: row.role }));
  }

  async countUsers(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
