import type { ModelRecord } from './model.ts';

export interface ProviderRecord {
  id: string;
  type: 'openai' | 'anthropic';
  baseUrl: string;
  apiKey: string | null;
}

export interface CatalogRepository {
  listModels(): Promise<ModelRecord[]>;
  upsertModel(model: ModelRecord, at: number): Promise<void>;
  countModels(): Promise<number>;
  listProviders(): Promise<ProviderRecord[]>;
  upsertProvider(provider: ProviderRecord, at: number): Promise<void>;
}
