import type { ModelRecord } from './model.ts';

/**
 * One way to reach a provider: a base URL and a vendor key (DESIGN §12 "Channels"). The highest-priority healthy channels
 * share traffic by weight; weight 0 takes none (failover included). `models` lists the gateway's model ids it serves
 * (null: all). The key is sealed at rest and never shown.
 */
export interface ChannelRecord {
  id: string;
  baseUrl: string;
  apiKey: string | null;
  /** ≥ 0; default 1. */
  weight: number;
  /** Larger preferred; default 0. */
  priority: number;
  models: string[] | null;
}

/** A provider: its wire format and one or more channels (the one-channel form is a provider with channel `default`). */
export interface ProviderRecord {
  id: string;
  type: 'openai' | 'anthropic';
  channels: ChannelRecord[];
}

/** The id of the channel the one-channel form `{baseUrl, apiKey}` makes. */
export const DEFAULT_CHANNEL_ID = 'default';

/** A provider of the one-channel form: `{baseUrl, apiKey}` as one channel `default` of weight 1, priority 0, all models. */
export function singleChannelProvider(id: string, type: ProviderRecord['type'], baseUrl: string, apiKey: string | null): ProviderRecord {
  return { id, type, channels: [{ id: DEFAULT_CHANNEL_ID, baseUrl, apiKey, weight: 1, priority: 0, models: null }] };
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
  'fallbacks',
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
