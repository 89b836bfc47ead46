import type { JsonObject } from '../../core/chat-types.ts';
import { GatewayError, modelDeprecated } from '../../core/errors.ts';
import {
  ONE_MILLION_BETA,
  rewriteBetas,
  rewriteMessagesRequest,
  splitModelId,
  type MessagesRequest,
} from '../../dialects/anthropic/messages-request.ts';
import { bytesIfSameKeys, type ClientBody } from '../../lib/json-depth.ts';
import { topLevelValue } from '../../lib/json-scan.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import { decodeUtf8 } from '../../lib/utf8.ts';
import type { AnthropicPassthrough, PassthroughOptions } from '../../providers/anthropic/anthropic-passthrough.ts';
import type { UpstreamResponse } from '../../providers/http-client.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import { priceUsage, type Cost } from '../billing/pricing.ts';
import { modelNotFound } from '../catalog/retirement.ts';
import { withFallbacks } from './fallbacks.ts';
import { authoriseModelCall, chargeCall, type AuthorisedCall, type Caller, type ModelCallDependencies } from './model-call.ts';
import { tokenUsageFromAnthropic } from './usage.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

export interface MessagesHeaders {
  version: string | undefined;
  /** Every `anthropic-beta` / `partner-beta` value the client sent. */
  betas: ReadonlyArray<string | undefined>;
}

/** A Messages call ready to forward: the rewritten body, the headers for the vendor, who pays. */
export interface PreparedMessages {
  call: AuthorisedCall;
  client: AnthropicPassthrough;
  /** What is sent: `upstream` serialised, or the client's own bytes when they say the same (`prepare`). */
  body: string | Buffer;
  /**
   * What is sent, as an object: parsed again from `body` when that is the client's bytes, on the rare occasions it is read
   * (a fallback model's rewrite, an estimate of a stream's input), so a long conversation's parsed text is not held while
   * the vendor answers (issue 16: held across a call, it was copied by every scavenge, then promoted).
   */
  upstream(): JsonObject;
  betas: string[];
  version: string | undefined;
}

const ANTHROPIC_FAMILY = 'anthropic';

/** Whether `rewritten` has the same fields as `original`, each the same value (a rewrite replaces what it changes). */
function sameFields(rewritten: JsonObject, original: JsonObject): boolean {
  let count = 0;
  for (const key in original) {
    if (rewritten[key] !== original[key]) return false;
    count++;
  }
  for (const _ in rewritten) count--;
  return count === 0;
}

/**
 * POST /v1/messages and /v1/messages/count_tokens: the vendor's own format passed through with SPEC 4.2's rewrites.
 * Model checks answer in the vendor's error shape (B); billing reads the vendor's usage (stream: message_start plus the
 * cumulative message_delta, counted once).
 */
export class MessagesService {
  constructor(
    private readonly dependencies: ModelCallDependencies,
    private readonly accounts: AccountsService,
    private readonly hashSecret: string,
  ) {}

  /** `clientBody`: the request as the client sent it, sent on as it is when SPEC 4.2's rewrites change nothing in it. */
  async prepare(caller: Caller, request: MessagesRequest, headers: MessagesHeaders, endpoint: 'messages' | 'messages.count_tokens', clientBody?: ClientBody): Promise<PreparedMessages> {
    const { id, oneMillion } = splitModelId(request.model);
    const model = this.dependencies.catalog.get(id);
    if (!model || model.kind !== 'chat') throw modelNotFound(id);
    if (model.family !== ANTHROPIC_FAMILY) {
      throw new GatewayError('model_not_found', `model: '${id}' is not a model of this API's family; use /v1/chat/completions for it.`, { param: 'model' });
    }
    const call = await authoriseModelCall(this.dependencies, caller, {
      model: id,
      endpoint,
      kinds: ['chat'],
      useWalletBalance: false,
      checkBalance: endpoint === 'messages',
    });
    const served = call.resolution.served;
    if (served.family !== ANTHROPIC_FAMILY) throw modelDeprecated(id, new Date(model.retiresAt ?? 0).toISOString());
    const promptCaching = caller.key.orgId === null || (await this.accounts.promptCaching(caller.key.orgId));
    const upstream = rewriteMessagesRequest(request, {
      upstreamModel: served.upstreamModel,
      smallTier: served.tier === 'small',
      promptCaching,
      hashSecret: this.hashSecret,
      tenant: caller.key.orgId ?? caller.key.userId,
    });
    // The client's bytes when no rewrite changed a field (the model is the vendor's id, nothing hashed or removed) and they
    // hold exactly the keys of what would be sent: none written twice at any depth (a tool's type checked is the type run).
    const bytes = sameFields(upstream, request) ? bytesIfSameKeys(clientBody, upstream) : undefined;
    return {
      call,
      client: this.dependencies.providers.passthrough(served.provider),
      body: bytes ?? JSON.stringify(upstream),
      upstream: bytes ? parsedAgain(bytes) : held(upstream),
      betas: rewriteBetas(headers.betas, oneMillion ? [ONE_MILLION_BETA] : []),
      version: headers.version,
    };
  }

  /** Sends to the served model's channels; a create falls back to the model's Anthropic-family fallbacks when they all fail. */
  private send<Answer>(
    prepared: PreparedMessages,
    path: '/v1/messages' | '/v1/messages/count_tokens',
    signal: CallSignal | undefined,
    call: (client: AnthropicPassthrough, options: PassthroughOptions) => Promise<Answer>,
  ): Promise<Answer> {
    const once = (): Promise<Answer> =>
      call(prepared.client, { requestId: prepared.call.caller.requestId, version: prepared.version, betas: prepared.betas, route: prepared.call.route, ...(signal ? { signal } : {}) });
    if (path !== '/v1/messages') return once();
    return withFallbacks(this.dependencies, prepared.call, once, {
      accepts: (model) => model.family === ANTHROPIC_FAMILY,
      rebind: (model) => {
        prepared.client = this.dependencies.providers.passthrough(model.provider);
        const upstream = { ...prepared.upstream(), model: model.upstreamModel };
        prepared.upstream = held(upstream);
        prepared.body = JSON.stringify(upstream);
      },
    });
  }

  /** Non-stream create. The vendor's bytes are returned unchanged unless retirement rewrites `model` and adds `warnings`. */
  async create(prepared: PreparedMessages, signal?: CallSignal): Promise<{ body: string; cost: Cost }> {
    const { text } = await this.send(prepared, '/v1/messages', signal, (client, options) => client.sendForText('/v1/messages', prepared.body, options));
    const { resolution } = prepared.call;
    // A body passed on as the vendor wrote it needs only its usage read: that value alone is parsed, found by a scan that
    // also checks the body is one object (issue 16: parsing the whole answer was ~5 µs of a call). The whole body is
    // parsed when retirement rewrites it or the scan finds no usage (a body that is not JSON is then a 502, uncharged).
    const range = resolution.warning ? undefined : topLevelValue(text, 'usage');
    const parsed = range ? undefined : vendorJson(text);
    const usage = range ? vendorJson(text.slice(range.start, range.end)) : parsed?.usage;
    const tokens = tokenUsageFromAnthropic(usage as JsonObject | null | undefined);
    const cost = priceUsage(prepared.call.resolution.billed, tokens);
    chargeCall(this.dependencies, prepared.call, cost, tokens, 'messages');
    if (!resolution.warning || !parsed) return { body: text, cost };
    return { body: JSON.stringify({ ...parsed, model: resolution.requested.id, warnings: [resolution.warning] }), cost };
  }

  async openStream(prepared: PreparedMessages, signal: CallSignal): Promise<UpstreamResponse> {
    return this.send(prepared, '/v1/messages', signal, (client, options) => client.send('/v1/messages', prepared.body, options, true));
  }

  /** count_tokens: forwarded after the same checks and rewrites; free. */
  async countTokens(prepared: PreparedMessages): Promise<string> {
    const { text } = await this.send(prepared, '/v1/messages/count_tokens', undefined, (client, options) => client.sendForText('/v1/messages/count_tokens', prepared.body, options));
    return text;
  }

  /** Books the charge of a stream from what its relay saw. */
  chargeStream(prepared: PreparedMessages, usage: JsonObject | undefined, outputSeen: boolean, produced: string): Cost {
    const tokens = tokenUsageFromAnthropic(usage);
    if (!usage) {
      const upstream = prepared.upstream();
      tokens.inputTokens = estimateTokens(textOf(upstream.messages) + textOf(upstream.system));
    }
    if (!outputSeen) tokens.outputTokens = estimateTokens(produced);
    const cost = priceUsage(prepared.call.resolution.billed, tokens);
    chargeCall(this.dependencies, prepared.call, cost, tokens, 'messages');
    return cost;
  }
}

// PreparedMessages.upstream's two forms, each made by a function of its own: a closure made inside `prepare` would hold
// prepare's whole context, the parsed request among it.
const held = (upstream: JsonObject) => (): JsonObject => upstream;
const parsedAgain = (bytes: Buffer) => (): JsonObject => JSON.parse(decodeUtf8(bytes)) as JsonObject;

/** A vendor's JSON text parsed; text that is not JSON is the vendor's fault (502). */
function vendorJson(text: string): JsonObject {
  try {
    return JSON.parse(text) as JsonObject;
  } catch {
    throw new GatewayError('upstream_error', 'The upstream model provider sent a body that is not JSON.');
  }
}
