import type { ModelRecord } from './model.ts';

export interface ProviderRecord {
  id: string;
  type: 'openai' | 'anthropic';
  baseUrl: string;
  apiKey: string | null;
}

/**
 * The fields an operator's edit owns: prices, retirement and routing. `models import` updates everything else (title,
 * owned_by, capacity…) but keeps these once the operator set them, unless asked to overwrite.
 */
export const OPERATOR_FIELDS = [
  'cost_context',
  'cost_completion',
  'cost_request',
  'cost_minute',
  'pricing',
  'deprecated_at',
  'deprecation_redirect_to',
  'provider',
  'upstreamModel',
] as const satisfies ReadonlyArray<keyof ModelRecord>;
export type OperatorField = (typeof OPERATOR_FIELDS)[number];

export interface CatalogRepository {
  listModels(): Promise<ModelRecord[]>;
  /** The operator-set fields of every model that has any. */
  operatorFields(): Promise<Map<string, OperatorField[]>>;
  /** Stores a model with the list of its operator-set fields (replacing the stored list). */
  upsertModel(model: ModelRecord, at: number, operatorFields: readonly OperatorField[]): Promise<void>;
  countModels(): Promise<number>;
  listProviders(): Promise<ProviderRecord[]>;
  upsertProvider(provider: ProviderRecord, at: number): Promise<void>;
  /** False when there was no such provider. */
  deleteProvider(id: string): Promise<boolean>;
  /** False when there was no such model. */
  deleteModel(id: string): Promise<boolean>;
}
