import type { ChatRequest, ChatResponse, ChatUsage } from '../../core/chat-types.ts';
import { withMemberFirst } from '../../lib/json-depth.ts';
import { OPEN_BRACE, topLevelValue } from '../../lib/json-scan.ts';
import { extended } from '../../lib/objects.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import { parseJsonBody } from '../../providers/http-client.ts';
import type { ChatStream } from '../../providers/provider.ts';
import { priceUsage } from '../billing/pricing.ts';
import { ChatCompletionsRelay } from './chat-completions-relay.ts';
import { withModelFallbacks } from './fallbacks.ts';
import { chargeCall, prepareModelCall, type Caller, type ModelCall, type ModelCallDependencies } from './model-call.ts';
import { pricedUsageText, withCosts, type PricedUsage } from './priced-usage.ts';
import { relayStream } from './stream-relay.ts';
import { tokenUsageFromChat } from './usage.ts';

const CHAT_KINDS = ['chat'] as const;
/** What a stream's upstream request adds to a body without stream_options (`openStream`). */
const INCLUDE_USAGE_MEMBER = Buffer.from('"stream_options":{"include_usage":true}');

/**
 * POST /v1/chat/completions: resolves the model, forwards to its provider, prices the vendor's usage with the requested
 * model's prices and books one ledger entry. Streams are relayed frame by frame; see `relay`.
 */
export class ChatCompletionsService {
  constructor(private readonly dependencies: ModelCallDependencies) {}

  prepare(caller: Caller, request: ChatRequest, useWalletBalance: boolean): Promise<ModelCall> {
    return prepareModelCall(this.dependencies, caller, { model: request.model, endpoint: 'chat.completions', kinds: CHAT_KINDS, useWalletBalance });
  }

  async complete(call: ModelCall, request: ChatRequest, signal?: AbortSignal): Promise<ChatResponse & { usage?: PricedUsage }> {
    const response = await withModelFallbacks(this.dependencies, call, () =>
      call.provider.chatCompletion({ ...request, model: call.resolution.served.upstreamModel }, { requestId: call.caller.requestId, route: call.route, ...(signal ? { signal } : {}) }),
    );
    return this.finish(call, request, response);
  }

  /**
   * `complete` as the HTTP route answers it, as JSON text. From a vendor that answers in OpenAI's format, the answer is
   * its own text with only `usage` replaced by the priced usage (issue 16: no parse and re-serialisation of a body that
   * passes through); the object path serves the rest (a redirected model, a vendor's answer without usage, other formats).
   * `clientBody`: the request's bytes as the client sent them, when they say exactly what `request` says.
   */
  async completeText(call: ModelCall, request: ChatRequest, clientBody?: Buffer): Promise<string> {
    const answer = await withModelFallbacks(this.dependencies, call, (): Promise<string | ChatResponse> => {
      // The request as the client sent it when the vendor knows the model by the same id: its object, and its own bytes when
      // they say the same (`clientBody`, passThroughBody), so it is not serialised again.
      const { upstreamModel } = call.resolution.served;
      const unchanged = upstreamModel === request.model;
      const upstream = unchanged ? request : { ...request, model: upstreamModel };
      const options = { requestId: call.caller.requestId, route: call.route, body: unchanged ? clientBody : undefined };
      return call.provider.chatCompletionText ? call.provider.chatCompletionText(upstream, options) : call.provider.chatCompletion(upstream, options);
    });
    if (typeof answer !== 'string') return JSON.stringify(this.finish(call, request, answer));
    return this.spliced(call, answer) ?? JSON.stringify(this.finish(call, request, parseJsonBody<ChatResponse>(answer)));
  }

  /** The vendor's text with its usage priced and charged, when it has a usage object at its top level and no rule rewrites more. */
  private spliced(call: ModelCall, text: string): string | undefined {
    if (call.resolution.warning) return undefined;
    const range = topLevelValue(text, 'usage');
    if (!range || text.charCodeAt(range.start) !== OPEN_BRACE) return undefined;
    const usageText = text.slice(range.start, range.end);
    const usage = parseJsonBody<ChatUsage>(usageText);
    const tokens = tokenUsageFromChat(usage);
    const cost = priceUsage(call.resolution.billed, tokens);
    chargeCall(this.dependencies, call, cost, tokens, 'chat.completions');
    return `${text.slice(0, range.start)}${pricedUsageText(usageText, usage, cost)}${text.slice(range.end)}`;
  }

  /** Prices and charges a vendor's answer (estimated when it has no usage) and applies retirement's rewrites. */
  private finish(call: ModelCall, request: ChatRequest, response: ChatResponse): ChatResponse & { usage: PricedUsage } {
    const { resolution } = call;
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

  /**
   * Opens the upstream stream; resolves once the vendor has accepted the call (errors before that are plain HTTP errors).
   * Until then it may fail over to other channels and fallback models (the call is rebound to the one that served).
   */
  async openStream(call: ModelCall, request: ChatRequest, signal: AbortSignal, clientBody?: Buffer): Promise<ChatStream> {
    return withModelFallbacks(this.dependencies, call, () => {
      const { upstreamModel } = call.resolution.served;
      // Usage is always asked for, so the charge follows the vendor's count; the client sees it only if it asked.
      const asksUsage = request.stream_options?.include_usage === true;
      const upstream: ChatRequest = asksUsage ? { ...request, model: upstreamModel } : { ...request, model: upstreamModel, stream_options: extended(request.stream_options ?? {}, { include_usage: true }) };
      // The client's bytes when they say the same (`clientBody`): as they are when they ask for usage, with the field put
      // first when they have no stream_options at all.
      const unchanged = upstreamModel === request.model && clientBody !== undefined;
      const body = !unchanged ? undefined : asksUsage ? clientBody : request.stream_options === undefined ? withMemberFirst(clientBody, INCLUDE_USAGE_MEMBER) : undefined;
      return call.provider.chatCompletionStream(upstream, { requestId: call.caller.requestId, route: call.route, signal, body });
    });
  }

  /** Relays an upstream stream to the client as SSE frames (rules: ChatCompletionsRelay); the charge is booked once at its end. */
  relay(call: ModelCall, request: ChatRequest, stream: ChatStream): AsyncGenerator<string> {
    const dialect = new ChatCompletionsRelay(call, request, (usage, produced) => {
      const tokens = tokenUsageFromChat(usage ?? estimateUsage(request, produced));
      chargeCall(this.dependencies, call, priceUsage(call.resolution.billed, tokens), tokens, 'chat.completions');
    });
    return relayStream(stream.batches(), () => stream.close(), dialect);
  }
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
