import type { Kysely } from 'kysely';
import type { CatalogRepository, ProviderRecord } from '../features/catalog/catalog.ts';
import { modelSchema, type ModelRecord } from '../features/catalog/model.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import type { Database } from './schema.ts';

/** Models and providers; a provider's API key is sealed at rest (DESIGN §14) and opened as the provider list is read. */
export class SqlCatalogRepository implements CatalogRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly secrets: SecretBox,
  ) {}

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
    return rows.map((row) => ({ id: row.id, type: row.type, baseUrl: row.base_url, apiKey: row.api_key === null ? null : this.openApiKey(row.id, row.api_key) }));
  }

  private openApiKey(providerId: string, sealed: string): string {
    const plain = this.secrets.open(sealed);
    // Start reseals every stored key under the master key, so a key that does not open was altered or sealed elsewhere.
    if (plain === undefined) throw new Error(`the API key of provider ${providerId} does not open under this gateway's master key`);
    return plain;
  }

  async upsertProvider(provider: ProviderRecord, at: number): Promise<void> {
    const apiKey = provider.apiKey === null ? null : this.secrets.seal(provider.apiKey);
    const values = { type: provider.type, base_url: provider.baseUrl, api_key: apiKey, updated_at: at };
    await this.db
      .insertInto('providers')
      .values({ id: provider.id, ...values })
      .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
      .execute();
  }
}
