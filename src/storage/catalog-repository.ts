import type { Kysely } from 'kysely';
import type { CatalogRepository, ProviderRecord } from '../features/catalog/catalog.ts';
import { modelSchema, type ModelRecord } from '../features/catalog/model.ts';
import type { Database } from './schema.ts';

export class SqlCatalogRepository implements CatalogRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async listModels(): Promise<ModelRecord[]> {
    const rows = await this.db.selectFrom('models').select('data').orderBy('id').execute();
    return rows.map((row) => modelSchema.parse(JSON.parse(row.data)));
  }

  async upsertModel(model: ModelRecord, at: number): Promise<void> {
    const data = JSON.stringify(model);
    await this.db
      .insertInto('models')
      .values({ id: model.id, data, updated_at: at })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({ data, updated_at: at }))
      .execute();
  }

  async countModels(): Promise<number> {
    const row = await this.db.selectFrom('models').select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow();
    return Number(row.count);
  }

  async listProviders(): Promise<ProviderRecord[]> {
    const rows = await this.db.selectFrom('providers').selectAll().orderBy('id').execute();
    return rows.map((row) => ({ id: row.id, type: row.type, baseUrl: row.base_url, apiKey: row.api_key }));
  }

  async upsertProvider(provider: ProviderRecord, at: number): Promise<void> {
    const values = { type: provider.type, base_url: provider.baseUrl, api_key: provider.apiKey, updated_at: at };
    await this.db
      .insertInto('providers')
      .values({ id: provider.id, ...values })
      .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
      .execute();
  }
}
