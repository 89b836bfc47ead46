import { GatewayError } from '../core/errors.ts';
import type { CatalogService } from '../features/catalog/catalog-service.ts';
import type { ChannelRecord, ProviderRecord } from '../features/catalog/catalog.ts';
import type { Clock } from '../lib/clock.ts';
import { AnthropicPassthrough } from './anthropic/anthropic-passthrough.ts';
import { AnthropicChatProvider } from './anthropic/anthropic-chat-provider.ts';
import { ChannelClient, type ChannelClientOptions } from './channels/channel-client.ts';
import { ChannelHealth, type ChannelHealthView } from './channels/channel-health.ts';
import { ChannelSet } from './channels/channel-set.ts';
import type { HttpClient } from './http-client.ts';
import { OpenAiMedia } from './openai/openai-media.ts';
import { OpenAiProvider } from './openai/openai-provider.ts';
import { OpenAiResponses } from './openai/openai-responses.ts';
import type { Provider } from './provider.ts';

/** The chat adapter of a provider record, by its type. */
function createProvider(record: ProviderRecord, client: ChannelClient): Provider | undefined {
  switch (record.type) {
    case 'openai':
      return new OpenAiProvider(record.id, client);
    case 'anthropic':
      return new AnthropicChatProvider(record.id, client);
    default:
      return undefined;
  }
}

/** Everything made for one provider when the catalog changes: its channel router and the adapters over it. */
interface Built {
  record: ProviderRecord;
  client: ChannelClient;
  provider: Provider | undefined;
  passthrough?: AnthropicPassthrough;
  media?: OpenAiMedia;
  responses?: OpenAiResponses;
}

/** A channel with its health, for the admin API and /metrics. */
export interface ChannelStatus {
  provider: string;
  channel: string;
  health: ChannelHealthView;
}

/**
 * Provider instances by id: the defaults from the environment (`openai`, `anthropic`), overridden and extended by the
 * providers stored through the admin API. Rebuilt whenever the catalog changes (every node within a second: the change
 * bus); each channel's health survives a rebuild unless its base URL or key changed.
 */
export class ProviderRegistry {
  private built = new Map<string, Built>();
  private health = new Map<string, { health: ChannelHealth; baseUrl: string; apiKey: string | null }>();

  constructor(
    private readonly defaults: readonly ProviderRecord[],
    private readonly catalog: CatalogService,
    private readonly http: HttpClient,
    private readonly options: Omit<ChannelClientOptions, 'clock'> & { clock: Clock },
  ) {
    catalog.onChange(() => this.rebuild());
    this.rebuild();
  }

  /** The Messages pass-through client of an `anthropic`-type provider. */
  passthrough(id: string): AnthropicPassthrough {
    const built = this.built.get(id);
    if (!built || built.record.type !== 'anthropic') throw new GatewayError('upstream_error', `No Anthropic-format provider '${id}' is configured for this model.`);
    return (built.passthrough ??= new AnthropicPassthrough(id, built.client));
  }

  /** Whether `media(id)` has a client: the provider exists and is of the `openai` type. */
  hasMedia(id: string): boolean {
    return this.built.get(id)?.record.type === 'openai';
  }

  /** The media client (images, speech, video, transcription) of an `openai`-type provider. */
  media(id: string): OpenAiMedia {
    const built = this.built.get(id);
    if (!built || !this.hasMedia(id)) throw new GatewayError('upstream_error', `No OpenAI-format provider '${id}' is configured for this media model.`);
    return (built.media ??= new OpenAiMedia(id, built.client));
  }

  /** The Responses API pass-through client of an `openai`-type provider. */
  responses(id: string): OpenAiResponses {
    const built = this.built.get(id);
    if (!built || built.record.type !== 'openai') throw new GatewayError('upstream_error', `No OpenAI-format provider '${id}' is configured for this model.`);
    return (built.responses ??= new OpenAiResponses(id, built.client));
  }

  get(id: string): Provider {
    const provider = this.built.get(id)?.provider;
    if (!provider) throw new GatewayError('upstream_error', `No provider '${id}' is configured for this model.`);
    return provider;
  }

  records(): ProviderRecord[] {
    const records = new Map(this.defaults.map((record) => [record.id, record]));
    for (const record of this.catalog.listProviders()) records.set(record.id, record);
    return [...records.values()];
  }

  /** Each channel's health in this process, by channel id; undefined for an unknown provider. */
  channelHealth(providerId: string): Map<string, ChannelHealthView> | undefined {
    const built = this.built.get(providerId);
    if (!built) return undefined;
    const now = this.options.clock.now();
    return new Map(built.client.channels.channels.map((channel) => [channel.id, channel.health.view(now)]));
  }

  /** Every channel of every provider with its health (/metrics). */
  channelStatuses(): ChannelStatus[] {
    const now = this.options.clock.now();
    const statuses: ChannelStatus[] = [];
    for (const built of this.built.values()) {
      for (const channel of built.client.channels.channels) statuses.push({ provider: built.record.id, channel: channel.id, health: channel.health.view(now) });
    }
    return statuses;
  }

  /** A channel keeps its health across rebuilds while it points at the same place with the same key. */
  private healthOf = (label: string, record: ChannelRecord): ChannelHealth => {
    const known = this.health.get(label);
    if (known && known.baseUrl === record.baseUrl && known.apiKey === record.apiKey) return known.health;
    const health = new ChannelHealth();
    this.health.set(label, { health, baseUrl: record.baseUrl, apiKey: record.apiKey });
    return health;
  };

  private rebuild(): void {
    const next = new Map<string, Built>();
    const labels = new Set<string>();
    for (const record of this.records()) {
      const channels = new ChannelSet(record.id, record.channels, this.healthOf);
      for (const channel of channels.channels) labels.add(channel.label);
      const client = new ChannelClient(record.id, channels, this.http.forProvider(record.id), this.options);
      next.set(record.id, { record, client, provider: createProvider(record, client) });
    }
    for (const label of this.health.keys()) if (!labels.has(label)) this.health.delete(label);
    this.built = next;
  }
}
