import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Small named values the gateway keeps (generated secrets). */
export class SqlSettingsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async delete(key: string): Promise<void> {
    await this.db.deleteFrom('settings').where('key', '=', key).execute();
  }

  /** Stores `value` unless the key already has one; returns the value that is stored (first writer wins across processes). */
  async getOrSet(key: string, value: string): Promise<string> {
    await this.db.insertInto('settings').values({ key, value }).onConflict((conflict) => conflict.column('key').doNothing()).execute();
    return (await this.get(key)) ?? value;
  }
}
