import type { Kysely } from 'kysely';
import { OPERATOR_FIELDS, singleChannelProvider, type CatalogRepository, type ChannelRecord, type OperatorField, type ProviderRecord } from '../features/catalog/catalog.ts';
import { modelSchema, type ModelRecord } from '../features/catalog/model.ts';
import type { SecretBox } from '../lib/secret-box.ts';
import type { Database } from './schema.ts';

/** Models and providers with their channels; each channel's API key is sealed at rest (DESIGN §14) and opened as the provider list is read. */
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
    const [providers, channels] = await Promise.all([
      this.db.selectFrom('providers').select(['id', 'type', 'base_url', 'api_key']).orderBy('id').execute(),
      this.db.selectFrom('provider_channels').selectAll().orderBy('provider_id').orderBy('position').execute(),
    ]);
    const byProvider = new Map<string, ChannelRecord[]>();
    for (const row of channels) {
      const list = byProvider.get(row.provider_id) ?? [];
      list.push({
        id: row.id,
        baseUrl: row.base_url,
        apiKey: row.api_key === null ? null : this.openApiKey(`${row.provider_id}/${row.id}`, row.api_key),
        weight: Number(row.weight),
        priority: Number(row.priority),
        models: row.models === null ? null : (JSON.parse(row.models) as string[]),
      });
      byProvider.set(row.provider_id, list);
    }
    // A row written without channels (by a tool that predates them) is the one-channel form of its own columns.
    return providers.map(
      (row) =>
        byProvider.has(row.id)
          ? { id: row.id, type: row.type, channels: byProvider.get(row.id)! }
          : singleChannelProvider(row.id, row.type, row.base_url, row.api_key === null ? null : this.openApiKey(row.id, row.api_key)),
    );
  }

  private openApiKey(channel: string, sealed: string): string {
    const plain = this.secrets.open(sealed);
    // Start reseals every stored key under the master key, so a key that does not open was altered or sealed elsewhere.
    if (plain === undefined) throw new Error(`the API key of provider channel ${channel} does not open under this gateway's master key`);
    return plain;
  }

  /** The provider row and its channels in one transaction: no process reads a provider without its channels. */
  async upsertProvider(provider: ProviderRecord, at: number): Promise<void> {
    const values = { type: provider.type, base_url: provider.channels[0]?.baseUrl ?? '', api_key: null, updated_at: at };
    const channels = provider.channels.map((channel, position) => ({
      provider_id: provider.id,
      id: channel.id,
      position,
      base_url: channel.baseUrl,
      api_key: channel.apiKey === null ? null : this.secrets.seal(channel.apiKey),
      weight: channel.weight,
      priority: channel.priority,
      models: channel.models === null ? null : JSON.stringify(channel.models),
    }));
    await this.db.transaction().execute(async (transaction) => {
      await transaction
        .insertInto('providers')
        .values({ id: provider.id, ...values })
        .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
        .execute();
      await transaction.deleteFrom('provider_channels').where('provider_id', '=', provider.id).execute();
      if (channels.length > 0) await transaction.insertInto('provider_channels').values(channels).execute();
    });
  }

  async deleteProvider(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (transaction) => {
      await transaction.deleteFrom('provider_channels').where('provider_id', '=', id).execute();
      const result = await transaction.deleteFrom('providers').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }

  async deleteModel(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('models').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
