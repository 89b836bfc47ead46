import { z } from 'zod';
import { singleChannelProvider, type ChannelRecord, type ProviderRecord } from './catalog.ts';

/** Channels per provider: the router keeps which ones a request tried in a 32-bit mask. */
export const MAX_CHANNELS = 32;

const channelId = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'must be 1-64 lowercase letters, digits, - or _');
const providerType = z.enum(['openai', 'anthropic']);

/** A channel as the admin API and the CLI take it (DESIGN §12): weight defaults to 1 (0: no traffic), priority to 0. */
export const channelInput = z.strictObject({
  id: channelId,
  baseUrl: z.url(),
  apiKey: z.string().min(1).nullable().optional(),
  weight: z.number().int().min(0).max(1_000_000).default(1),
  priority: z.number().int().min(-1_000_000).max(1_000_000).default(0),
  models: z.array(z.string().min(1).max(200)).min(1).max(1000).nullable().optional(),
});

const channelsInput = z
  .array(channelInput)
  .min(1)
  .max(MAX_CHANNELS)
  .refine((channels) => new Set(channels.map((channel) => channel.id)).size === channels.length, 'channel ids must be unique');

/**
 * `PUT /admin/v1/providers/:id`: `{type, channels}`, or the one-channel form `{type, baseUrl, apiKey?}`. One object schema
 * (not a union) so a mistake is named by its field.
 */
export const providerInput = z
  .strictObject({
    type: providerType,
    channels: channelsInput.optional(),
    baseUrl: z.url().optional(),
    apiKey: z.string().min(1).nullable().optional(),
  })
  .superRefine((body, context) => {
    if (body.channels !== undefined && (body.baseUrl !== undefined || body.apiKey !== undefined)) {
      context.addIssue({ code: 'custom', path: ['channels'], message: 'give either channels or baseUrl/apiKey, not both' });
    } else if (body.channels === undefined && body.baseUrl === undefined) {
      context.addIssue({ code: 'custom', path: ['baseUrl'], message: 'is required (or give channels)' });
    }
  });

/**
 * `PATCH`: any of the fields; `channels` replaces the whole list (a channel without `apiKey` keeps its stored key, see
 * `CatalogService.patchProvider`), `baseUrl`/`apiKey` change a one-channel provider.
 */
export const providerPatchInput = z
  .strictObject({ type: providerType, channels: channelsInput, baseUrl: z.url(), apiKey: z.string().min(1).nullable() })
  .partial()
  .refine((body) => Object.keys(body).length > 0, { message: 'give at least one of type, channels, baseUrl and apiKey' })
  .refine((body) => body.channels === undefined || (body.baseUrl === undefined && body.apiKey === undefined), {
    message: 'give either channels or baseUrl/apiKey, not both',
  });

export type ProviderInput = z.output<typeof providerInput>;
export type ProviderPatch = z.output<typeof providerPatchInput>;

/** A channel as stored; an absent `apiKey` is none here (PUT), PATCH looks it up first (`apiKey` undefined vs null). */
export function channelRecord(input: z.output<typeof channelInput>): ChannelRecord {
  return { id: input.id, baseUrl: input.baseUrl, apiKey: input.apiKey ?? null, weight: input.weight, priority: input.priority, models: input.models ?? null };
}

/** The stored record of a parsed PUT body. */
export function providerRecord(id: string, input: ProviderInput): ProviderRecord {
  if (input.channels !== undefined) return { id, type: input.type, channels: input.channels.map(channelRecord) };
  return singleChannelProvider(id, input.type, input.baseUrl ?? '', input.apiKey ?? null);
}
