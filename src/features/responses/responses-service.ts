import type { ChatRequest, ChatResponse, ChatUsage, JsonObject, ThinkingBlock } from '../../core/chat-types.ts';
import { UpstreamRoute } from '../../providers/channels/upstream-route.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { ResponsesRequest } from '../../dialects/openai/responses-request.ts';
import type { Model } from '../catalog/model.ts';
import { outputItemsFromChat, incompleteReason, renderResponse, responseUsage, type ResponseContext } from '../../dialects/openai/responses-render.ts';
import { inputItems, responsesToChat } from '../../dialects/openai/responses-to-chat.ts';
import { unixSeconds } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { bytesIfSameKeys, type ClientBody } from '../../lib/json-depth.ts';
import { estimateTokens } from '../../lib/token-estimate.ts';
import type { UpstreamResponse } from '../../providers/http-client.ts';
import type { OpenAiResponses } from '../../providers/openai/openai-responses.ts';
import type { ChatStream } from '../../providers/provider.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import { priceUsage, type Cost } from '../billing/pricing.ts';
import { estimateUsage } from '../inference/chat-completions.ts';
import { fallbackModels, rebindToFallback, withFallbacks } from '../inference/fallbacks.ts';
import { chargeCall, prepareModelCall, type Caller, type ModelCall, type ModelCallDependencies } from '../inference/model-call.ts';
import { tokenUsageFromChat, tokenUsageFromResponses } from '../inference/usage.ts';
import { relayPassthroughStream, relayTranslatedStream } from './responses-stream.ts';
import type { ResponsesRepository, StoredResponse } from './stored-responses.ts';
import type { CallSignal } from '../../lib/call-abort.ts';
import type { PushSource } from '../../lib/push-stream.ts';

const CHAT_KINDS = ['chat'] as const;
const DAY_MS = 86_400_000;
/** Retention runs at most this often (and at start). */
const MAINTAIN_EVERY_MS = 60 * 60_000;
/** How far back `previous_response_id` chains are followed. */
const MAX_CHAIN = 1000;

export interface ResponsesDependencies extends ModelCallDependencies {
  responses: ResponsesRepository;
  retentionDays: number;
  /** Told of failures off the request path: retention (tried again later), storing a streamed response. */
  report: (error: unknown, what: string) => void;
}

/** A Responses call authorised and ready to forward, one of two ways. */
export type PreparedResponse = TranslatedCall | PassthroughCall;

/** A model the gateway translates (Claude): the canonical chat request, and what the stored turn needs. */
export interface TranslatedCall {
  mode: 'translated';
  call: ModelCall;
  request: ResponsesRequest;
  chat: ChatRequest;
  /** This request's own input items (stored with the output, for the next turn). */
  items: JsonObject[];
  context: ResponseContext;
  /** Hosted tool types the request offered that Claude cannot run, left out (the `x-tollgate-skipped-tools` header). */
  skippedTools: string[];
}

/** A model the vendor serves in this format (OpenAI): the body as bytes, the client for its Responses API. */
export interface PassthroughCall {
  mode: 'passthrough';
  call: ModelCall;
  request: ResponsesRequest;
  client: OpenAiResponses;
  /** What is sent: the request with the vendor's model id, serialised, or the client's own bytes when they say the same. */
  body: string | Buffer;
  /** The channel a follow-up (`previous_response_id`) must use; null: any. */
  channel: string | null;
}

const notFound = (id: string, param: string | null): GatewayError =>
  new GatewayError('not_found', `Response with id '${id}' not found.`, { param, codeA: 'not_found' });

/** The account a key's responses belong to: its org for a business key, else its user. */
export const ownerOf = (caller: Caller): AccountRef => (caller.key.orgId ? { type: 'org', id: caller.key.orgId } : { type: 'user', id: caller.key.userId });

const sameAccount = (a: AccountRef, b: AccountRef): boolean => a.type === b.type && a.id === b.id;

/**
 * POST /v1/responses and GET /v1/responses/:id. The same checks as every model endpoint (model, key's allowed models,
 * retirement, spend limit, balance) run first; then OpenAI-format models pass through to the vendor and Claude models are
 * translated to the canonical chat request and back. Every response id is recorded with the account that made it; ids of
 * other accounts answer 404 like unknown ones. Each call is charged once, from the vendor's usage, at the model that served:
 * when every channel of the model fails, its fallbacks are tried, each in its own mode (`withResponseFallbacks`).
 */
export class ResponsesService {
  private maintainedAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly dependencies: ResponsesDependencies) {}

  /** `clientBody`: the request as the client sent it, sent on as it is to an OpenAI-format vendor that knows the model by its id. */
  async prepare(caller: Caller, request: ResponsesRequest, useWalletBalance: boolean, clientBody?: ClientBody): Promise<PreparedResponse> {
    const call = await prepareModelCall(this.dependencies, caller, { model: request.model, endpoint: 'responses', kinds: CHAT_KINDS, useWalletBalance });
    const previous = request.previous_response_id ? await this.owned(caller, request.previous_response_id, 'previous_response_id') : undefined;
    if (previous) this.continueWith(call, previous);
    const translated = call.provider.type !== 'openai';
    if (previous && previous.translated !== translated) {
      throw invalidParam('previous_response_id', `was made by a model this one cannot continue ('${previous.model}'); use a model of the same vendor`);
    }
    // The stored response lives in the vendor account of the channel that made it: the follow-up goes there.
    if (!translated) return this.passthrough(call, request, previous?.channel ?? null, clientBody);
    return this.translated(call, request, previous ? await this.history(previous) : []);
  }

  /**
   * A follow-up of a response a fallback served (the stored model is one of the asked model's fallbacks) is served by that
   * fallback again: the conversation lives where it was made. No other fallback is tried for it (`withResponseFallbacks`).
   */
  private continueWith(call: ModelCall, previous: StoredResponse): void {
    if (previous.model === call.resolution.served.id) return;
    const model = fallbackModels(this.dependencies, call).find((candidate) => candidate.id === previous.model);
    if (!model) return;
    rebindToFallback(call, model);
    call.provider = this.dependencies.providers.get(model.provider);
  }

  /**
   * The call's served model (OpenAI format) bound for pass-through; `channel` pins a follow-up. The client's bytes go as
   * they came when the vendor knows the model by the id they name and they hold exactly the request's keys (nothing
   * dropped — the gateway's own useWalletBalance, say — and no key written twice: `bytesIfSameKeys`).
   */
  private passthrough(call: ModelCall, request: ResponsesRequest, channel: string | null, clientBody?: ClientBody): PassthroughCall {
    const served = call.resolution.served;
    const bytes = served.upstreamModel === request.model ? bytesIfSameKeys(clientBody, request) : undefined;
    const body = bytes ?? JSON.stringify({ ...request, model: served.upstreamModel });
    return { mode: 'passthrough', call, request, client: this.dependencies.providers.responses(served.provider), body, channel };
  }

  /** The call's served model (Claude) bound for translation; throws a 400 for what it cannot take. */
  private translated(call: ModelCall, request: ResponsesRequest, history: readonly JsonObject[]): TranslatedCall {
    const { resolution } = call;
    const items = inputItems(request.input);
    const { chat, toolNames, skippedTools } = responsesToChat(request, history, items, resolution.served.upstreamModel);
    const context: ResponseContext = {
      id: newId('response'),
      createdAt: unixSeconds(this.dependencies.clock),
      // The model that answered, as chat completions report it; a redirected model keeps the id asked for (SPEC 9.6).
      model: resolution.warning ? resolution.requested.id : resolution.served.id,
      request,
      warnings: resolution.warning ? [{ ...resolution.warning }] : null,
      toolNames,
    };
    return { mode: 'translated', call, request, chat, items, context, skippedTools };
  }

  /**
   * Runs `attempt` for the prepared call and, while its model cannot be reached, for each fallback in the mode that
   * fallback needs (an OpenAI model passed through, a Claude model translated; DESIGN §12). A follow-up
   * (`previous_response_id`) never falls back: its conversation lives with the model and vendor account that made it.
   * A fallback that cannot take the request in its mode (a translation 400: an unsupported tool or item) is skipped.
   */
  private withResponseFallbacks<T>(prepared: PreparedResponse, attempt: (current: PreparedResponse) => Promise<T>): Promise<T> {
    const { call, request } = prepared;
    let current = prepared;
    return withFallbacks(this.dependencies, call, () => attempt(current), {
      accepts: (model) => !request.previous_response_id && this.canServe(request, model),
      rebind: (model) => {
        call.provider = this.dependencies.providers.get(model.provider);
        current = call.provider.type === 'openai' ? this.passthrough(call, request, null) : this.translated(call, request, []);
      },
    });
  }

  /** Whether a fallback model can take this request: an OpenAI model always, a Claude model if the request translates. */
  private canServe(request: ResponsesRequest, model: Model): boolean {
    try {
      if (this.dependencies.providers.get(model.provider).type === 'openai') return true;
      responsesToChat(request, [], inputItems(request.input), model.upstreamModel);
      return true;
    } catch (error) {
      if (error instanceof GatewayError) return false;
      throw error;
    }
  }

  /** A non-stream call, with fallbacks: the answer (a Response object, or the vendor's text) and the call that served it. */
  async complete(prepared: PreparedResponse): Promise<{ served: PreparedResponse; body: JsonObject | string }> {
    const { served, finish } = await this.withResponseFallbacks(prepared, async (current): Promise<{ served: PreparedResponse; finish: () => Promise<JsonObject | string> }> => {
      if (current.mode === 'passthrough') {
        const response = await this.sendPassthrough(current, false);
        return { served: current, finish: () => this.completePassthrough(current, response) };
      }
      const { call, chat } = current;
      const response = await call.provider.chatCompletion({ ...chat, stream: false }, { requestId: call.caller.requestId, route: call.route });
      return { served: current, finish: () => this.completeTranslated(current, response) };
    });
    return { served, body: await finish() };
  }

  /**
   * A stream, with fallbacks until the vendor accepted it (before any byte reached the client): the frames to relay and the
   * call that serves them. Nothing after that is retried.
   */
  async openStream(prepared: PreparedResponse, signal: CallSignal): Promise<{ served: PreparedResponse; frames: PushSource<string> }> {
    return this.withResponseFallbacks(prepared, async (current) => {
      if (current.mode === 'passthrough') return { served: current, frames: this.relayPassthrough(current, await this.sendPassthrough(current, true, signal)) };
      return { served: current, frames: this.relayTranslated(current, await this.openTranslatedStream(current, signal)) };
    });
  }

  /** A non-stream translated answer: the Response object, charged and stored. */
  private async completeTranslated(prepared: TranslatedCall, response: ChatResponse): Promise<JsonObject> {
    const { chat } = prepared;
    const choice = response.choices[0];
    const usage: ChatUsage = response.usage ?? estimateUsage(chat, completionText(response));
    this.charge(prepared.call, tokenUsageFromChat(usage));
    const output = choice ? outputItemsFromChat(choice.message, choice.finish_reason, prepared.context.toolNames) : [];
    const thinking = ((choice?.message.thinking_blocks ?? []) as ThinkingBlock[]).map((block) => block.thinking).join('');
    const incomplete = incompleteReason(choice?.finish_reason);
    const body = renderResponse(prepared.context, {
      status: incomplete ? 'incomplete' : 'completed',
      output,
      usage: responseUsage(usage, estimateTokens(thinking)),
      incomplete,
    });
    await this.storeTranslated(prepared, body);
    return prepared.context.warnings ? { ...body, warnings: prepared.context.warnings } : body;
  }

  /** Opens the Claude stream (usage always asked for, so the charge follows the vendor's count). */
  private openTranslatedStream(prepared: TranslatedCall, signal: CallSignal): Promise<ChatStream> {
    const { call, chat } = prepared;
    return call.provider.chatCompletionStream({ ...chat, stream: true, stream_options: { include_usage: true } }, { requestId: call.caller.requestId, route: call.route, signal });
  }

  /** Relays a translated stream as Responses events (rules: responses-stream.ts); charged once, stored at its end. */
  private relayTranslated(prepared: TranslatedCall, stream: ChatStream): PushSource<string> {
    return relayTranslatedStream(this, prepared, stream, (error) => this.dependencies.report(error, 'storing a streamed response failed'));
  }

  /** Relays a pass-through stream as the vendor sent it (rules: responses-stream.ts); charged once, its id recorded. */
  private relayPassthrough(prepared: PassthroughCall, upstream: UpstreamResponse): PushSource<string> {
    return relayPassthroughStream(this, prepared, upstream, (error) => this.dependencies.report(error, 'recording a streamed response failed'));
  }

  /** Sends a pass-through request; the caller reads (non-stream) or relays (stream) the body. */
  private sendPassthrough(prepared: PassthroughCall, stream: boolean, signal?: CallSignal): Promise<UpstreamResponse> {
    return prepared.client.create(prepared.body, { requestId: prepared.call.caller.requestId, stream, signal, route: prepared.call.route, channel: prepared.channel });
  }

  /** A non-stream pass-through answer: charged from its usage, its id recorded; the vendor's bytes unless retirement rewrites. */
  private async completePassthrough(prepared: PassthroughCall, response: UpstreamResponse): Promise<string> {
    const text = await response.body.text();
    let parsed: JsonObject;
    try {
      parsed = JSON.parse(text) as JsonObject;
    } catch {
      throw new GatewayError('upstream_error', 'The upstream model provider sent a body that is not JSON.');
    }
    this.charge(prepared.call, tokenUsageFromResponses(parsed.usage as JsonObject | undefined));
    if (typeof parsed.id === 'string') await this.recordPassthrough(prepared, parsed.id);
    const { resolution } = prepared.call;
    if (!resolution.warning) return text;
    return JSON.stringify({ ...parsed, model: resolution.requested.id, warnings: [resolution.warning] });
  }

  /** Books a charge (once per call: the relays and the non-stream paths each call it exactly once). */
  charge(call: ModelCall, tokens: ReturnType<typeof tokenUsageFromChat>): Cost {
    const cost = priceUsage(call.resolution.billed, tokens);
    chargeCall(this.dependencies, call, cost, tokens, 'responses');
    return cost;
  }

  /** Stores a finished translated response: owner always; the rendered body and the turn's items unless `store: false`. */
  async storeTranslated(prepared: TranslatedCall, body: JsonObject): Promise<void> {
    const keep = prepared.request.store !== false;
    await this.record({
      id: prepared.context.id,
      owner: ownerOf(prepared.call.caller),
      keyId: prepared.call.caller.key.id,
      model: prepared.call.resolution.served.id,
      provider: prepared.call.resolution.served.provider,
      channel: prepared.call.route.channel,
      translated: true,
      createdAt: this.dependencies.clock.now(),
      previousResponseId: prepared.request.previous_response_id ?? null,
      conversation: keep ? [...prepared.items, ...((body.output as JsonObject[]) ?? [])] : null,
      body: keep ? body : null,
    });
  }

  async recordPassthrough(prepared: PassthroughCall, id: string): Promise<void> {
    await this.record({
      id,
      owner: ownerOf(prepared.call.caller),
      keyId: prepared.call.caller.key.id,
      model: prepared.call.resolution.served.id,
      provider: prepared.call.resolution.served.provider,
      channel: prepared.call.route.channel,
      translated: false,
      createdAt: this.dependencies.clock.now(),
      previousResponseId: prepared.request.previous_response_id ?? null,
      conversation: null,
      body: null,
    });
  }

  /** GET /v1/responses/:id: the stored body (translated), or the vendor's answer after the ownership check (pass-through). */
  async retrieve(caller: Caller, id: string, query: string): Promise<{ body: string; contentType: string }> {
    const stored = await this.owned(caller, id, null);
    if (stored.translated) {
      if (!stored.body) throw notFound(id, null);
      return { body: JSON.stringify(stored.body), contentType: 'application/json' };
    }
    const model = this.dependencies.catalog.get(stored.model);
    const route = new UpstreamRoute(model?.id ?? stored.model);
    const response = await this.dependencies.providers.responses(stored.provider).retrieve(id, query, { requestId: caller.requestId, route, channel: stored.channel });
    return { body: await response.body.text(), contentType: response.contentType ?? 'application/json' };
  }

  /** Deletes responses past TOLLGATE_RESPONSES_DAYS, at most hourly; a failure is reported and tried again later. */
  async maintain(force = false): Promise<void> {
    const now = this.dependencies.clock.now();
    if (!force && now - this.maintainedAt < MAINTAIN_EVERY_MS) return;
    this.maintainedAt = now;
    try {
      await this.dependencies.responses.deleteBefore(now - this.dependencies.retentionDays * DAY_MS);
    } catch (error) {
      this.maintainedAt = Number.NEGATIVE_INFINITY;
      this.dependencies.report(error, 'deleting expired responses failed; will try again');
    }
  }

  private async record(response: StoredResponse): Promise<void> {
    await this.dependencies.responses.insert(response);
    void this.maintain();
  }

  /** A stored response of the caller's account; another account's id is answered as an unknown one. */
  private async owned(caller: Caller, id: string, param: string | null): Promise<StoredResponse> {
    const stored = await this.dependencies.responses.get(id);
    if (!stored || !sameAccount(stored.owner, ownerOf(caller))) throw notFound(id, param);
    return stored;
  }

  /** The items of every earlier turn of a translated conversation, oldest first; a turn not stored ends it with 404. */
  private async history(last: StoredResponse): Promise<JsonObject[]> {
    const turns: JsonObject[][] = [];
    let turn: StoredResponse | undefined = last;
    for (let depth = 0; turn && depth < MAX_CHAIN; depth += 1) {
      if (!turn.conversation) throw notFound(turn.id, 'previous_response_id');
      turns.push(turn.conversation);
      turn = turn.previousResponseId ? await this.dependencies.responses.get(turn.previousResponseId) : undefined;
    }
    return turns.reverse().flat();
  }
}

function completionText(response: ChatResponse): string {
  return response.choices.map((choice) => `${typeof choice.message.content === 'string' ? choice.message.content : ''}${JSON.stringify(choice.message.tool_calls ?? '')}`).join('');
}
