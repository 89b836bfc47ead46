import type { ChatRequest, ChatResponse, ChatUsage } from '../../core/chat-types.ts';
import { withMemberFirst } from '../../lib/json-depth.ts';
import { OPEN_BRACE, topLevelValue } from '../../lib/json-scan.ts';
import { decodeUtf8 } from '../../lib/utf8.ts';
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
import type { CallSignal } from '../../lib/call-abort.ts';
import type { PushSource } from '../../lib/push-stream.ts';

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

  async complete(call: ModelCall, request: ChatRequest, signal?: CallSignal): Promise<ChatResponse & { usage?: PricedUsage }> {
    const response = await withModelFallbacks(this.dependencies, call, () =>
      call.provider.chatCompletion({ ...request, model: call.resolution.served.upstreamModel }, { requestId: call.caller.requestId, route: call.route, ...(signal ? { signal } : {}) }),
    );
    return this.finish(call, promptOf(request), response);
  }

  /**
   * `complete` as the HTTP route answers it, as JSON text. From a vendor that answers in OpenAI's format, the answer is
   * its own text with only `usage` replaced by the priced usage (issue 16: no parse and re-serialisation of a body that
   * passes through); the object path serves the rest (a redirected model, a vendor's answer without usage, other formats).
   * `clientBody`: the request's bytes as the client sent them, when they say exactly what `request` says.
   *
   * Not an async function: its parameters would be held until the answer came. While the vendor answers, the parsed request
   * is held only where a later attempt builds its call from it (a fallback model); the bytes stand for it otherwise
   * (`promptOf`). A long conversation's parsed text held across the call was copied by every scavenge, then promoted.
   */
  completeText(call: ModelCall, request: ChatRequest, clientBody?: Buffer): Promise<string> {
    const answer = withModelFallbacks(this.dependencies, call, (): Promise<string | ChatResponse> => {
      // The request as the client sent it when the vendor knows the model by the same id: its object, and its own bytes when
      // they say the same (`clientBody`, passThroughBody), so it is not serialised again.
      const { upstreamModel } = call.resolution.served;
      const unchanged = upstreamModel === request.model;
      const upstream = unchanged ? request : { ...request, model: upstreamModel };
      const options = { requestId: call.caller.requestId, route: call.route, body: unchanged ? clientBody : undefined };
      return call.provider.chatCompletionText ? call.provider.chatCompletionText(upstream, options) : call.provider.chatCompletion(upstream, options);
    });
    return this.answered(call, answer, promptOf(request, clientBody));
  }

  private async answered(call: ModelCall, pending: Promise<string | ChatResponse>, prompt: PromptTokens): Promise<string> {
    const answer = await pending;
    if (typeof answer !== 'string') return JSON.stringify(this.finish(call, prompt, answer));
    return this.spliced(call, answer) ?? JSON.stringify(this.finish(call, prompt, parseJsonBody<ChatResponse>(answer)));
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
  private finish(call: ModelCall, prompt: PromptTokens, response: ChatResponse): ChatResponse & { usage: PricedUsage } {
    const { resolution } = call;
    const usage: ChatUsage = response.usage ?? estimatedUsage(prompt(), completionText(response));
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
  async openStream(call: ModelCall, request: ChatRequest, signal: CallSignal, clientBody?: Buffer): Promise<ChatStream> {
    return withModelFallbacks(this.dependencies, call, () => {
      const { upstreamModel } = call.resolution.served;
      // Usage is always asked for, so the charge follows the vendor's count; the client sees it only if it asked.
      const asksUsage = request.stream_options?.include_usage === true;
      // `extended`, not a spread: on Node 20 a spread given a field its source lacks made new hidden classes on every stream.
      const upstream: ChatRequest = asksUsage ? { ...request, model: upstreamModel } : extended(request, { model: upstreamModel, stream_options: extended(request.stream_options ?? {}, { include_usage: true }) });
      // The client's bytes when they say the same (`clientBody`): as they are when they ask for usage, with the field put
      // first when they have no stream_options at all.
      const unchanged = upstreamModel === request.model && clientBody !== undefined;
      const body = !unchanged ? undefined : asksUsage ? clientBody : request.stream_options === undefined ? withMemberFirst(clientBody, INCLUDE_USAGE_MEMBER) : undefined;
      return call.provider.chatCompletionStream(upstream, { requestId: call.caller.requestId, route: call.route, signal, body });
    });
  }

  /**
   * Relays an upstream stream to the client as SSE frames (rules: ChatCompletionsRelay); the charge is booked once at its end.
   * `clientBody` (the bytes sent for `request`) stands for the request while the stream lasts (`promptOf`).
   */
  relay(call: ModelCall, request: ChatRequest, stream: ChatStream, clientBody?: Buffer): PushSource<string> {
    const prompt = promptOf(request, clientBody);
    const dialect = new ChatCompletionsRelay(call, request, (usage, produced) => {
      const tokens = tokenUsageFromChat(usage ?? estimatedUsage(prompt(), produced));
      chargeCall(this.dependencies, call, priceUsage(call.resolution.billed, tokens), tokens, 'chat.completions');
    });
    return relayStream(stream.source(), dialect);
  }
}

function completionText(response: ChatResponse): string {
  return response.choices.map((choice) => textOf(choice.message.content) + textOf(choice.message.tool_calls)).join('');
}

/** Usage for a call the vendor did not count (a stream cut short): the tokenizer's estimate of prompt and output. */
export function estimateUsage(request: ChatRequest, produced: string): ChatUsage {
  return estimatedUsage(promptTokens(request), produced);
}

function estimatedUsage(prompt: number, produced: string): ChatUsage {
  const completion = estimateTokens(produced);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The tokenizer's estimate of a request's prompt: its messages and tools. */
function promptTokens(request: ChatRequest): number {
  return estimateTokens(textOf(request.messages)) + (request.tools ? estimateTokens(JSON.stringify(request.tools)) : 0);
}

/** A request's prompt tokens, estimated only if asked (a vendor that counted none). */
type PromptTokens = () => number;

/**
 * The estimate, from the client's bytes when there are any (they say what `request` says: passThroughBody), parsed again
 * only if ever asked; otherwise from `request`, which the estimate then holds. Each closure is made by a function of its own:
 * V8 keeps every variable a function's closures use in one context that each of them holds, so a closure made beside one
 * that uses `request` would hold it too.
 */
function promptOf(request: ChatRequest, clientBody?: Buffer): PromptTokens {
  return clientBody === undefined ? promptOfRequest(request) : promptOfBytes(clientBody);
}

const promptOfRequest = (request: ChatRequest): PromptTokens => () => promptTokens(request);
const promptOfBytes = (bytes: Buffer): PromptTokens => () => promptTokens(JSON.parse(decodeUtf8(bytes)) as ChatRequest);
