import type { JsonObject } from '../../core/chat-types.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import { costNumbers, emptyUsage, priceUsage } from '../billing/pricing.ts';
import { withModelFallbacks } from './fallbacks.ts';
import { chargeCall, prepareModelCall, type Caller, type ModelCallDependencies } from './model-call.ts';

/** SPEC 4.8: the service's moderation model. */
export const MODERATION_MODEL = 'text-moderation-latest';

/** SPEC 2.8: the 11 categories every result carries, whatever the vendor's model returns beyond them. */
export const MODERATION_CATEGORIES = [
  'sexual',
  'hate',
  'harassment',
  'self-harm',
  'sexual/minors',
  'hate/threatening',
  'violence/graphic',
  'self-harm/intent',
  'self-harm/instructions',
  'harassment/threatening',
  'violence',
] as const;

/**
 * POST /v1/moderations: one synchronous call to the moderation model (or, when every channel of it fails, to its fallbacks),
 * reduced to SPEC 2.8's shape and priced on input tokens at the model that served.
 */
export class ModerationsService {
  constructor(private readonly dependencies: ModelCallDependencies) {}

  async create(caller: Caller, input: string, useWalletBalance: boolean): Promise<{ body: JsonObject; headers: Record<string, string> }> {
    const call = await prepareModelCall(this.dependencies, caller, { model: MODERATION_MODEL, endpoint: 'moderations', kinds: ['moderation'], useWalletBalance });
    const response = await withModelFallbacks(this.dependencies, call, () =>
      call.provider.moderations({ model: call.resolution.served.upstreamModel, input }, { requestId: caller.requestId, route: call.route }),
    );
    const { resolution } = call;
    const promptTokens = estimateTokens(textOf(input));
    const tokens = { ...emptyUsage(), inputTokens: promptTokens };
    const cost = priceUsage(resolution.billed, tokens);
    chargeCall(this.dependencies, call, cost, tokens, 'moderations');
    const results = response.results.map((result) => {
      const categories: Record<string, boolean> = {};
      const scores: Record<string, number> = {};
      for (const name of MODERATION_CATEGORIES) {
        categories[name] = result.categories[name] === true;
        const score = result.category_scores[name];
        scores[name] = typeof score === 'number' ? score : 0;
      }
      return { flagged: MODERATION_CATEGORIES.some((name) => categories[name]), categories, category_scores: scores };
    });
    const body: JsonObject = {
      id: response.id,
      // The model that answered (a fallback when one served, as chat completions report it); a redirect keeps the id asked for.
      model: resolution.warning ? resolution.requested.id : resolution.served.id,
      results,
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, ...costNumbers(cost) },
    };
    if (resolution.warning) body.warnings = [resolution.warning];
    return { body, headers: resolution.headers };
  }
}
