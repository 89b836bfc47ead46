import type { ChatChunk, ChatRequest, ChatResponse, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import type { ChatStream } from '../../providers/provider.ts';
import { costNumbers, priceUsage, type Cost } from '../billing/pricing.ts';
import { chargeCall, prepareModelCall, type Caller, type ModelCall, type ModelCallDependencies } from './model-call.ts';
import { tokenUsageFromChat } from './usage.ts';

const CHAT_KINDS = ['chat'] as const;

/** A usage block as the gateway returns it: the vendor's counts plus what they cost. */
export type PricedUsage = ChatUsage & { prompt_cost: number; completion_cost: number; total_cost: number };

export const withCosts = (usage: ChatUsage, cost: Cost): PricedUsage => ({ ...usage, ...costNumbers(cost) });

/**
 * POST /v1/chat/completions: resolves the model, forwards to its provider, prices the vendor's usage with the requested
 * model's prices and books one ledger entry. Streams are relayed frame by frame; see `stream`.
 */
export class ChatCompletionsService {
  constructor(private readonly dependencies: ModelCallDependencies) {}

  prepare(caller: Caller, request: ChatRequest, useWalletBalance: boolean): Promise<ModelCall> {
    return prepareModelCall(this.dependencies, caller, { model: request.model, endpoint: 'chat.completions', kinds: CHAT_KINDS, useWalletBalance });
  }

  async complete(call: ModelCall, request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse & { usage?: PricedUsage }> {
    const { resolution } = call;
    const upstream = { ...request, model: resolution.served.upstreamModel };
    const response = await call.provider.chatCompletion(upstream, { requestId: call.caller.requestId, ...(signal ? { signal } : {}) });
    const usage: ChatUsage = response.usage ?? estimateUsage(request, completionText(response));
    const tokens = tokenUsageFromChat(usage);
    const cost = priceUsage(resolution.billed, tokens);
    chargeCall(this.dependencies, call, cost, tokens, 'chat.completions');
    const body: ChatResponse & { usage: PricedUsage; warnings?: unknown[] } = { ...response, usage: withCosts(usage, cost) };
    if (resolution.warning) {
      body.model = resolution.requested.id;
      body.warnings = [resolution.warning];
    }
    return body;
  }

  /** Opens the upstream stream; resolves once the vendor has accepted the call (errors before that are plain HTTP errors). */
  async openStream(call: ModelCall, request: ChatRequest, signal: AbortSignal): Promise<ChatStream> {
    const upstream: ChatRequest = {
      ...request,
      model: call.resolution.served.upstreamModel,
      // Usage is always asked for, so the charge follows the vendor's count; the client sees it only if it asked.
      stream_options: { ...(request.stream_options ?? {}), include_usage: true },
    };
    return call.provider.chatCompletionStream(upstream, { requestId: call.caller.requestId, signal });
  }

  /**
   * Relays an upstream stream as SSE `data` payloads, ending with `[DONE]` when the vendor finished. Frames pass unchanged unless a rule applies: retirement (`model`
   * replaced in every frame, `warnings` in the first), and the usage frame (costs added; dropped when the client did not ask
   * for usage). The charge is booked when the relay ends for any reason — finished, vendor error, or client gone (`return()`
   * on this generator) — from the vendor's usage, or estimated from what was produced when the stream broke off first.
   */
  async *relay(call: ModelCall, request: ChatRequest, stream: ChatStream): AsyncGenerator<string> {
    const { resolution } = call;
    const clientWantsUsage = request.stream_options?.include_usage === true;
    const redirected = resolution.warning !== null;
    let usage: ChatUsage | undefined;
    let produced = '';
    let first = true;
    try {
      for await (const event of stream) {
        if (event.kind === 'error') {
          yield JSON.stringify({ error: event.error });
          return;
        }
        const chunk = event.chunk;
        for (const choice of chunk.choices ?? []) produced += deltaText(choice.delta);
        if (chunk.usage) usage = chunk.usage;
        const isUsageFrame = chunk.usage != null && (chunk.choices?.length ?? 0) === 0;
        if (isUsageFrame && !clientWantsUsage) continue;
        const rewrite = redirected || isUsageFrame || (!clientWantsUsage && 'usage' in chunk);
        if (!rewrite) {
          first = false;
          yield event.raw;
          continue;
        }
        // The `usage: null` the vendor puts on every frame (because the gateway asked for usage) is cut from the text
        // instead of re-serialising the frame.
        if (!redirected && !isUsageFrame && chunk.usage === null) {
          const cut = event.raw.replace(',"usage":null', '');
          if (cut.length !== event.raw.length) {
            first = false;
            yield cut;
            continue;
          }
        }
        const out: ChatChunk & { warnings?: unknown[] } = { ...chunk };
        if (!clientWantsUsage) delete out.usage;
        if (redirected) out.model = resolution.requested.id;
        if (redirected && first) out.warnings = [resolution.warning];
        if (isUsageFrame && usage) out.usage = withCosts(usage, priceUsage(resolution.billed, tokenUsageFromChat(usage)));
        first = false;
        yield JSON.stringify(out);
      }
      yield '[DONE]';
    } finally {
      stream.close();
      const tokens = tokenUsageFromChat(usage ?? estimateUsage(request, produced));
      chargeCall(this.dependencies, call, priceUsage(resolution.billed, tokens), tokens, 'chat.completions');
    }
  }
}

function deltaText(delta: JsonObject | undefined): string {
  if (!delta) return '';
  let text = typeof delta.content === 'string' ? delta.content : '';
  if (Array.isArray(delta.tool_calls)) {
    for (const call of delta.tool_calls as JsonObject[]) {
      const fn = call.function as JsonObject | undefined;
      if (typeof fn?.name === 'string') text += fn.name;
      if (typeof fn?.arguments === 'string') text += fn.arguments;
    }
  }
  return text;
}

function completionText(response: ChatResponse): string {
  return response.choices.map((choice) => textOf(choice.message.content) + textOf(choice.message.tool_calls)).join('');
}

/** Usage for a call the vendor did not count (a stream cut short): the tokenizer's estimate of prompt and output. */
export function estimateUsage(request: ChatRequest, produced: string): ChatUsage {
  const prompt = estimateTokens(textOf(request.messages)) + (request.tools ? estimateTokens(JSON.stringify(request.tools)) : 0);
  const completion = estimateTokens(produced);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}
