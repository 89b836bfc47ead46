import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Every column that holds a secret sealed at rest. Provider API keys were stored in clear before they were sealed. */
export type SealedColumn = 'bots.token_sealed' | 'tasks.webhook_secret' | 'providers.api_key' | 'provider_channels.api_key';

export interface SealedValue {
  column: SealedColumn;
  /** The row's id (a channel's: `<provider id>/<channel id>`). */
  id: string;
  text: string;
}

/** Reads and rewrites sealed secrets wherever they are kept, for resealing on upgrade and on key rotation. */
export class SqlSealedValuesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async list(): Promise<SealedValue[]> {
    const [bots, tasks, providers, channels] = await Promise.all([
      this.db.selectFrom('bots').select(['id', 'token_sealed as text']).execute(),
      this.db.selectFrom('tasks').select(['id', 'webhook_secret as text']).where('webhook_secret', 'is not', null).execute(),
      this.db.selectFrom('providers').select(['id', 'api_key as text']).where('api_key', 'is not', null).execute(),
      this.db.selectFrom('provider_channels').select(['provider_id', 'id', 'api_key as text']).where('api_key', 'is not', null).execute(),
    ]);
    return [
      ...bots.map((row) => ({ column: 'bots.token_sealed' as const, id: row.id, text: row.text })),
      ...tasks.map((row) => ({ column: 'tasks.webhook_secret' as const, id: row.id, text: row.text! })),
      ...providers.map((row) => ({ column: 'providers.api_key' as const, id: row.id, text: row.text! })),
      ...channels.map((row) => ({ column: 'provider_channels.api_key' as const, id: `${row.provider_id}/${row.id}`, text: row.text! })),
    ];
  }

  /**
   * Replaces a value only while it is still `value.text` (another process may have resealed it, or a delivery erased it).
   * Returns whether it was replaced.
   */
  async replace(value: SealedValue, text: string): Promise<boolean> {
    const result = await this.update(value, text);
    return Number(result.numUpdatedRows) > 0;
  }

  private update(value: SealedValue, text: string) {
    switch (value.column) {
      case 'bots.token_sealed':
        return this.db.updateTable('bots').set({ token_sealed: text }).where('id', '=', value.id).where('token_sealed', '=', value.text).executeTakeFirst();
      case 'tasks.webhook_secret':
        return this.db.updateTable('tasks').set({ webhook_secret: text }).where('id', '=', value.id).where('webhook_secret', '=', value.text).executeTakeFirst();
      case 'providers.api_key':
        return this.db.updateTable('providers').set({ api_key: text }).where('id', '=', value.id).where('api_key', '=', value.text).executeTakeFirst();
      case 'provider_channels.api_key': {
        const [providerId = '', channelId = ''] = value.id.split('/');
        return this.db
          .updateTable('provider_channels')
          .set({ api_key: text })
          .where('provider_id', '=', providerId)
          .where('id', '=', channelId)
          .where('api_key', '=', value.text)
          .executeTakeFirst();
      }
    }
  }
}
