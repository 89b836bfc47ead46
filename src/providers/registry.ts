import { GatewayError } from '../core/errors.ts';
import type { CatalogService } from '../features/catalog/catalog-service.ts';
import type { ProviderRecord } from '../features/catalog/catalog.ts';
import { AnthropicPassthrough } from './anthropic/anthropic-passthrough.ts';
import { AnthropicChatProvider } from './anthropic/anthropic-chat-provider.ts';
import type { HttpClient } from './http-client.ts';
import { OpenAiMedia } from './openai/openai-media.ts';
import { OpenAiProvider } from './openai/openai-provider.ts';
import { OpenAiResponses } from './openai/openai-responses.ts';
import type { Provider } from './provider.ts';

/** The chat adapter of a provider record, by its type. */
function createProvider(record: ProviderRecord, http: HttpClient): Provider | undefined {
  const endpoint = { baseUrl: record.baseUrl, apiKey: record.apiKey };
  switch (record.type) {
    case 'openai':
      return new OpenAiProvider(record.id, endpoint, http);
    case 'anthropic':
      return new AnthropicChatProvider(record.id, endpoint, http);
    default:
      return undefined;
  }
}

/**
 * Provider instances by id: the defaults from the environment (`openai`, `anthropic`), overridden and extended by the
 * providers stored through the admin API. Rebuilt whenever the catalog changes.
 */
export class ProviderRegistry {
  private providers = new Map<string, Provider>();
  private passthroughs = new WeakMap<ProviderRecord, AnthropicPassthrough>();
  private recordsById = new Map<string, ProviderRecord>();
  private mediaClients = new WeakMap<ProviderRecord, OpenAiMedia>();
  private responsesClients = new WeakMap<ProviderRecord, OpenAiResponses>();

  constructor(
    private readonly defaults: readonly ProviderRecord[],
    private readonly catalog: CatalogService,
    private readonly http: HttpClient,
  ) {
    catalog.onChange(() => this.rebuild());
    this.rebuild();
  }

  /** The Messages pass-through client of an `anthropic`-type provider. */
  passthrough(id: string): AnthropicPassthrough {
    const record = this.recordsById.get(id);
    if (!record || record.type !== 'anthropic') throw new GatewayError('upstream_error', `No Anthropic-format provider '${id}' is configured for this model.`);
    let client = this.passthroughs.get(record);
    if (!client) {
      client = new AnthropicPassthrough(record.id, { baseUrl: record.baseUrl, apiKey: record.apiKey }, this.http.forProvider(record.id));
      this.passthroughs.set(record, client);
    }
    return client;
  }

  /** The media client (images, speech, video, transcription) of an `openai`-type provider. */
  media(id: string): OpenAiMedia {
    const record = this.recordsById.get(id);
    if (!record || record.type !== 'openai') throw new GatewayError('upstream_error', `No OpenAI-format provider '${id}' is configured for this media model.`);
    let client = this.mediaClients.get(record);
    if (!client) {
      client = new OpenAiMedia(record.id, { baseUrl: record.baseUrl, apiKey: record.apiKey }, this.http.forProvider(record.id));
      this.mediaClients.set(record, client);
    }
    return client;
  }

  /** The Responses API pass-through client of an `openai`-type provider. */
  responses(id: string): OpenAiResponses {
    const record = this.recordsById.get(id);
    if (!record || record.type !== 'openai') throw new GatewayError('upstream_error', `No OpenAI-format provider '${id}' is configured for this model.`);
    let client = this.responsesClients.get(record);
    if (!client) {
      client = new OpenAiResponses(record.id, { baseUrl: record.baseUrl, apiKey: record.apiKey }, this.http.forProvider(record.id));
      this.responsesClients.set(record, client);
    }
    return client;
  }

  get(id: string): Provider {
    const provider = this.providers.get(id);
    if (!provider) throw new GatewayError('upstream_error', `No provider '${id}' is configured for this model.`);
    return provider;
  }

  records(): ProviderRecord[] {
    const records = new Map(this.defaults.map((record) => [record.id, record]));
    for (const record of this.catalog.listProviders()) records.set(record.id, record);
    return [...records.values()];
  }

  private rebuild(): void {
    this.recordsById = new Map(this.records().map((record) => [record.id, record]));
    const next = new Map<string, Provider>();
    for (const record of this.records()) {
      const provider = createProvider(record, this.http.forProvider(record.id));
      if (provider) next.set(record.id, provider);
    }
    this.providers = next;
  }
}
