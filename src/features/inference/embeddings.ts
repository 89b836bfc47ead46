import type { EmbeddingsRequest, EmbeddingsResponse, JsonObject } from '../../core/chat-types.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import { costNumbers, emptyUsage, priceUsage } from '../billing/pricing.ts';
import { withModelFallbacks } from './fallbacks.ts';
import { chargeCall, prepareModelCall, type Caller, type ModelCallDependencies } from './model-call.ts';

/** POST /v1/embeddings: forwarded to the model's provider, priced on the vendor's prompt tokens. */
export class EmbeddingsService {
  constructor(private readonly dependencies: ModelCallDependencies) {}

  async create(caller: Caller, request: EmbeddingsRequest, useWalletBalance: boolean): Promise<{ body: JsonObject; headers: Record<string, string> }> {
    const call = await prepareModelCall(this.dependencies, caller, { model: request.model, endpoint: 'embeddings', kinds: ['embedding'], useWalletBalance });
    const response: EmbeddingsResponse = await withModelFallbacks(this.dependencies, call, () =>
      call.provider.embeddings({ ...request, model: call.resolution.served.upstreamModel }, { requestId: caller.requestId, route: call.route }),
    );
    const { resolution } = call;
    const promptTokens = response.usage?.prompt_tokens ?? estimateTokens(textOf(request.input));
    const tokens = { ...emptyUsage(), inputTokens: promptTokens };
    const cost = priceUsage(resolution.billed, tokens);
    chargeCall(this.dependencies, call, cost, tokens, 'embeddings');
    const body: JsonObject = {
      ...response,
      usage: { ...(response.usage ?? {}), prompt_tokens: promptTokens, total_tokens: response.usage?.total_tokens ?? promptTokens, ...costNumbers(cost) },
    };
    if (resolution.warning) {
      body.model = resolution.requested.id;
      body.warnings = [resolution.warning];
    }
    return { body, headers: resolution.headers };
  }
}
