import type { Dispatcher, FormData } from 'undici';
import { singleChannelProvider } from '../../features/catalog/catalog.ts';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { extended } from '../../lib/objects.ts';
import { transportError, type HttpClient, type UpstreamResponse, type UpstreamText } from '../http-client.ts';
import { UpstreamError } from '../upstream-error.ts';
import { ChannelHealth } from './channel-health.ts';
import { ChannelSet, type RoutedChannel } from './channel-set.ts';
import type { UpstreamRoute } from './upstream-route.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

/** Where one attempt goes: a channel's base URL and vendor key. */
export interface UpstreamEndpoint {
  baseUrl: string;
  apiKey: string | null;
}

/** A vendor call for one channel: adapters build it from the endpoint (their URL and header rules), once per attempt. */
export type UpstreamTarget = (endpoint: UpstreamEndpoint) => { url: string; headers: Record<string, string> };

export interface SendInit {
  method?: Dispatcher.HttpMethod;
  body?: string | Buffer | FormData;
  signal?: CallSignal | undefined;
}

export interface ChannelClientOptions {
  /** TOLLGATE_UPSTREAM_ATTEMPTS: attempts per call, the first included. */
  attempts: number;
  clock: Clock;
  /** Told of every failed attempt (it is logged; it is never charged). */
  onAttemptFailed?: (failure: { channel: string; attempt: number; error: UpstreamError; requestId: string | undefined }) => void;
}

/**
 * The one door every vendor call goes through (chat, messages, responses, embeddings, moderations, media, transcriptions,
 * assistants' and tasks' calls): it picks a channel of the provider (ChannelSet), sends, and on a connection error, a
 * timeout before the response head, 429 or 5xx moves to the next channel, up to `attempts` in all. It returns once a
 * vendor has answered 2xx and before any byte of the body is read, so a stream fails over only before its first byte
 * reached the client, and only the attempt that served is ever charged. Every attempt updates its channel's health.
 *
 * When every attempt fails, or no channel may take the call: 429 with the soonest `retry-after` when every attempt (or
 * every channel) was rate-limited, else the last failure (504 for a timeout, 502 otherwise).
 */
export class ChannelClient {
  constructor(
    readonly provider: string,
    readonly channels: ChannelSet,
    private readonly http: HttpClient,
    private readonly options: ChannelClientOptions,
  ) {}

  /** A client of one endpoint (tests, tools): a provider of the one-channel form. */
  static single(provider: string, endpoint: UpstreamEndpoint, http: HttpClient, options: Partial<ChannelClientOptions> = {}): ChannelClient {
    const record = singleChannelProvider(provider, 'openai', endpoint.baseUrl, endpoint.apiKey);
    return new ChannelClient(provider, new ChannelSet(provider, record.channels, () => new ChannelHealth()), http, { attempts: 1, clock: systemClock, ...options });
  }

  /**
   * Sends a call for `route.model`; a non-2xx answer is read whole and thrown as UpstreamError. `pinned` names the channel
   * a follow-up must use (a vendor object lives in the account that made it): then that channel alone is tried.
   */
  send(target: UpstreamTarget, init: SendInit, route: UpstreamRoute, pinned?: string | null): Promise<UpstreamResponse> {
    return this.routed(target, init, route, pinned, (url, headers) => this.http.send(url, extended({ headers }, init)));
  }

  /** `send` for a call whose answer is read whole (HttpClient.sendForText): same channels, failover and health. */
  sendForText(target: UpstreamTarget, init: { body: string | Buffer; signal?: CallSignal | undefined }, route: UpstreamRoute): Promise<UpstreamText> {
    return this.routed(target, init, route, undefined, (url, headers) => this.http.sendForText(url, { headers, body: init.body, signal: init.signal }));
  }

  private async routed<Answer>(
    target: UpstreamTarget,
    init: { signal?: CallSignal | undefined },
    route: UpstreamRoute,
    pinned: string | null | undefined,
    transport: (url: string, headers: Record<string, string>) => Promise<Answer>,
  ): Promise<Answer> {
    const { clock } = this.options;
    const pin = pinned ? this.channels.channels.find((channel) => channel.id === pinned) : undefined;
    const limit = pin ? 1 : this.options.attempts;
    let tried = 0;
    let last: UpstreamError | undefined;
    let everyAttemptRateLimited = true;
    route.provider = this.provider;
    for (let attempt = 1; attempt <= limit; attempt++) {
      const now = clock.now();
      const channel = pin ?? this.channels.pick(route.model, tried, now) ?? this.channels.pickCooling(route.model, tried, now);
      if (channel === undefined) break;
      tried |= channel.bit;
      route.attempts += 1;
      route.channel = channel.id;
      const outcome = await this.attempt(channel, target, init.signal, attempt, transport);
      if (!(outcome instanceof UpstreamError)) return outcome;
      last = outcome;
      if (!(outcome.kind === 'http' && outcome.status === 429)) everyAttemptRateLimited = false;
    }
    throw this.exhausted(route, last, everyAttemptRateLimited);
  }

  /** Reads a 2xx body as JSON, mapping a broken or invalid body to UpstreamError. */
  json<T>(response: UpstreamResponse): Promise<T> {
    return this.http.json<T>(response);
  }

  /** One attempt: the 2xx response, or the failure to fail over from (other failures are thrown). */
  private async attempt<Answer>(
    channel: RoutedChannel,
    target: UpstreamTarget,
    signal: CallSignal | undefined,
    attempt: number,
    transport: (url: string, headers: Record<string, string>) => Promise<Answer>,
  ): Promise<Answer | UpstreamError> {
    channel.health.chosen();
    const call = target(channel.record);
    const started = performance.now();
    try {
      const response = await transport(call.url, call.headers);
      channel.health.succeeded(performance.now() - started);
      return response;
    } catch (error) {
      if (signal?.aborted) {
        channel.health.abandoned();
        throw error;
      }
      const failure = transportError(error);
      if (!failure.failsOver) {
        // The vendor answered; the request itself was refused (4xx): the client's to fix, the channel is fine.
        channel.health.succeeded(performance.now() - started);
        throw failure;
      }
      channel.health.failed(this.options.clock.now(), failure.kind === 'http' && failure.status === 429, failure.retryAfterMs);
      this.options.onAttemptFailed?.({ channel: channel.label, attempt, error: failure, requestId: call.headers['x-request-id'] });
      return failure;
    }
  }

  private exhausted(route: UpstreamRoute, last: UpstreamError | undefined, everyAttemptRateLimited: boolean): UpstreamError {
    const now = this.options.clock.now();
    const rateLimitedUntil = this.channels.rateLimitedUntil(route.model, now);
    if (last === undefined) {
      if (rateLimitedUntil !== undefined) return rateLimited(this.provider, rateLimitedUntil - now, '');
      return new UpstreamError(502, '', 'text/plain', `no channel of provider '${this.provider}' is available for model '${route.model}'`, 'network');
    }
    if (everyAttemptRateLimited) {
      const wait = rateLimitedUntil !== undefined ? rateLimitedUntil - now : last.retryAfterMs;
      return rateLimited(this.provider, wait, last.body);
    }
    if (last.kind === 'http' && last.status === 429) {
      return new UpstreamError(502, '', 'text/plain', `every channel of provider '${this.provider}' tried for this call failed`, 'network');
    }
    return last;
  }
}

function rateLimited(provider: string, waitMs: number | undefined, body: string): UpstreamError {
  return new UpstreamError(429, body, 'application/json', `every channel of provider '${provider}' is rate-limited`, 'http', waitMs === undefined ? undefined : Math.max(0, waitMs));
}

