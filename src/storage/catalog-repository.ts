import type { Kysely } from 'kysely';
import { OPERATOR_FIELDS, type CatalogRepository, type OperatorField, type ProviderRecord } from '../features/catalog/catalog.ts';
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

  async operatorFields(): Promise<Map<string, OperatorField[]>> {
    const rows = await this.db.selectFrom('models').select(['id', 'operator_fields']).where('operator_fields', '!=', '[]').execute();
    const known = new Set<string>(OPERATOR_FIELDS);
    return new Map(rows.map((row) => [row.id, (JSON.parse(row.operator_fields) as string[]).filter((field): field is OperatorField => known.has(field))]));
  }

  async upsertModel(model: ModelRecord, at: number, operatorFields: readonly OperatorField[]): Promise<void> {
    const data = JSON.stringify(model);
    const fields = JSON.stringify([...operatorFields].sort());
    await this.db
      .insertInto('models')
      .values({ id: model.id, data, operator_fields: fields, updated_at: at })
      .onConflict((conflict) => conflict.column('id').doUpdateSet({ data, operator_fields: fields, updated_at: at }))
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

  async deleteProvider(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('providers').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async deleteModel(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
