import { sql, type Kysely, type Transaction } from 'kysely';
import type { Org, User } from '../features/accounts/accounts.ts';
import type { AccountsDirectory, DeleteOutcome, DirectoryQuery, Member } from '../features/accounts/directory.ts';
import { containsText, decodeIdCursor, pageOf } from './list-pages.ts';
import { moneyText } from './money-sql.ts';
import type { Database } from './schema.ts';

/** Whether any row of `table` has `column = value`: an account with history is kept. */
const exists = async (trx: Transaction<Database>, table: 'api_keys' | 'org_members' | 'tasks' | 'bots' | 'assistants', column: string, value: string): Promise<boolean> => {
  const result = await sql`select 1 from ${sql.table(table)} where ${sql.ref(column)} = ${value} limit 1`.execute(trx);
  return result.rows.length > 0;
};

export class SqlAccountsDirectory implements AccountsDirectory {
  constructor(private readonly db: Kysely<Database>) {}

  async listUsers(query: DirectoryQuery): Promise<{ users: User[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('users').select(['id', 'name', 'email', 'operator', moneyText('balance_nano').as('balance')]);
    if (query.query) select = select.where((eb) => eb.or([containsText('name', query.query!), containsText('email', query.query!), containsText('id', query.query!)]));
    const after = query.cursor === undefined ? undefined : decodeIdCursor(query.cursor);
    if (after) select = select.where('id', '<', after);
    const page = pageOf(await select.orderBy('id', 'desc').limit(query.limit + 1).execute(), query.limit);
    const users = page.rows.map((row) => ({ id: row.id, name: row.name, email: row.email, operator: row.operator === 1, balance: BigInt(row.balance) }));
    return { users, nextCursor: page.nextCursor };
  }

  async listOrgs(query: DirectoryQuery): Promise<{ orgs: Org[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('orgs').select(['id', 'name', 'owner_id', 'prompt_caching', moneyText('balance_nano').as('balance')]);
    if (query.query) select = select.where((eb) => eb.or([containsText('name', query.query!), containsText('id', query.query!)]));
    const after = query.cursor === undefined ? undefined : decodeIdCursor(query.cursor);
    if (after) select = select.where('id', '<', after);
    const page = pageOf(await select.orderBy('id', 'desc').limit(query.limit + 1).execute(), query.limit);
    const orgs = page.rows.map((row) => ({ id: row.id, name: row.name, ownerId: row.owner_id, promptCaching: row.prompt_caching === 1, balance: BigInt(row.balance) }));
    return { orgs, nextCursor: page.nextCursor };
  }

  async members(orgId: string): Promise<Member[]> {
    const rows = await this.db
      .selectFrom('org_members')
      .innerJoin('users', 'users.id', 'org_members.user_id')
      .select(['org_members.user_id', 'org_members.role', 'users.name', 'users.email'])
      .where('org_members.org_id', '=', orgId)
      .orderBy('org_members.user_id')
      .execute();
    return rows.map((row) => ({ userId: row.user_id, role: row.role, name: row.name, email: row.email }));
  }

  async deleteUser(id: string): Promise<DeleteOutcome> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await trx.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst())) return 'missing';
      const ledgerRow = await trx.selectFrom('ledger').select('id').where('account_type', '=', 'user').where('account_id', '=', id).limit(1).executeTakeFirst();
      const referenced = ledgerRow !== undefined
        || (await exists(trx, 'api_keys', 'user_id', id))
        || (await exists(trx, 'org_members', 'user_id', id))
        || (await exists(trx, 'tasks', 'user_id', id))
        || (await exists(trx, 'bots', 'user_id', id))
        || (await exists(trx, 'assistants', 'owner_id', id));
      if (referenced) return 'in_use';
      await trx.deleteFrom('sessions').where('user_id', '=', id).execute();
      await trx.deleteFrom('users').where('id', '=', id).execute();
      return 'deleted';
    });
  }

  async deleteOrg(id: string): Promise<DeleteOutcome> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await trx.selectFrom('orgs').select('id').where('id', '=', id).executeTakeFirst())) return 'missing';
      const ledgerRow = await trx.selectFrom('ledger').select('id').where('account_type', '=', 'org').where('account_id', '=', id).limit(1).executeTakeFirst();
      const members = await trx.selectFrom('org_members').select('role').where('org_id', '=', id).execute();
      const referenced = ledgerRow !== undefined
        || members.some((member) => member.role !== 'owner')
        || members.length > 1
        || (await exists(trx, 'api_keys', 'org_id', id))
        || (await exists(trx, 'bots', 'org_id', id))
        || (await exists(trx, 'assistants', 'org_id', id));
      if (referenced) return 'in_use';
      await trx.deleteFrom('org_members').where('org_id', '=', id).execute();
      await trx.deleteFrom('orgs').where('id', '=', id).execute();
      return 'deleted';
    });
  }
}
