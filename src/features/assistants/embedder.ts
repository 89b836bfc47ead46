import { UpstreamRoute } from '../../providers/channels/upstream-route.ts';
import type { JsonObject } from '../../core/chat-types.ts';
import { emptyUsage, priceUsage, type Cost, type TokenUsage } from '../billing/pricing.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { ProviderRegistry } from '../../providers/registry.ts';
import type { Model } from '../catalog/model.ts';

export interface Embeddings {
  vectors: number[][];
  model: Model;
  usage: TokenUsage;
  cost: Cost;
}

/**
 * Embeds texts with the configured embedding model (assistant catalog search, knowledge bases). Pricing is the model's;
 * whether it is charged, and to whom, is the caller's decision.
 */
export class Embedder {
  constructor(
    private readonly catalog: CatalogService,
    private readonly providers: ProviderRegistry,
    private readonly modelId: string,
  ) {}

  /** The embedding model, or undefined when none is configured (search is then lexical only). */
  model(): Model | undefined {
    const model = this.catalog.get(this.modelId);
    return model && model.kind === 'embedding' ? model : undefined;
  }

  /** `signal` abandons the vendor call (a tool call out of time). */
  async embed(texts: readonly string[], requestId: string, signal?: AbortSignal): Promise<Embeddings | undefined> {
    const model = this.model();
    if (!model || texts.length === 0) return undefined;
    const response = await this.providers.get(model.provider).embeddings({ model: model.upstreamModel, input: [...texts] }, { requestId, route: new UpstreamRoute(model.id), ...(signal ? { signal } : {}) });
    const vectors = (response.data as JsonObject[])
      .slice()
      .sort((a, b) => Number(a.index ?? 0) - Number(b.index ?? 0))
      .map((item) => item.embedding as number[]);
    const usage = { ...emptyUsage(), inputTokens: response.usage?.prompt_tokens ?? 0 };
    return { vectors, model, usage, cost: priceUsage(model, usage) };
  }
}

export function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let left = 0;
  let right = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    dot += a[i]! * b[i]!;
    left += a[i]! * a[i]!;
    right += b[i]! * b[i]!;
  }
  return left === 0 || right === 0 ? 0 : dot / Math.sqrt(left * right);
}
