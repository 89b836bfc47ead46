import { z } from 'zod';
import { parseAmount } from '../../lib/money.ts';

export const MODEL_KINDS = ['chat', 'embedding', 'moderation', 'image', 'media', 'transcription'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

const price = z
  .string()
  .refine((text) => {
    const value = parseAmount(text);
    return value !== undefined && value >= 0n;
  }, 'must be a non-negative decimal text up to 1000000000 with at most 9 fraction digits');

const isoDateTime = z.string().refine((text) => !Number.isNaN(Date.parse(text)), 'must be an ISO 8601 date-time');

/** Per-model overrides of derived prices, per 1,000 tokens (decimal text). */
export const pricingSchema = z
  .object({
    cache_read: price.optional(),
    cache_write: price.optional(),
    cache_write_1h: price.optional(),
  })
  .strict();

const modelShape = {
  id: z.string().min(1).max(200),
  kind: z.enum(MODEL_KINDS),
  provider: z.string().min(1),
  upstreamModel: z.string().min(1).optional(),
  family: z.string().min(1).optional(),
  title: z.string().max(200).optional(),
  created: z.number().int().nonnegative().optional(),
  max_capacity: z.number().int().nonnegative(),
  cost_context: price,
  cost_completion: price,
  cost_request: price.optional(),
  cost_minute: price.optional(),
  pricing: pricingSchema.optional(),
  deprecated_at: isoDateTime.nullable(),
  deprecation_redirect_to: z.string().min(1).nullable(),
  vision: z.boolean(),
  tier: z.enum(['small', 'standard']),
  mediaType: z.enum(['image', 'speech', 'video']).optional(),
  owned_by: z.string().optional(),
  /** Models that serve instead, in order, when every channel of this one fails (billed at the model that served). */
  fallbacks: z.array(z.string().min(1).max(200)).max(5).optional(),
};

/**
 * A catalog entry: SPEC 2.3's fields plus how to reach the model (DESIGN §4). Prices are per 1,000 tokens in the gateway
 * currency; `cost_request` is per task or generation, `cost_minute` per minute of transcribed audio.
 */
export const modelSchema = z
  .object({
    ...modelShape,
    max_capacity: modelShape.max_capacity.default(0),
    cost_context: modelShape.cost_context.default('0'),
    cost_completion: modelShape.cost_completion.default('0'),
    deprecated_at: modelShape.deprecated_at.default(null),
    deprecation_redirect_to: modelShape.deprecation_redirect_to.default(null),
    vision: modelShape.vision.default(false),
    tier: modelShape.tier.default('standard'),
  })
  .strict();

/** A change to some fields of a model: no defaults, so a field not sent keeps its stored value. */
export const modelPatchSchema = z.object(modelShape).omit({ id: true }).partial().strict();

export type ModelInput = z.input<typeof modelSchema>;
export type ModelRecord = z.output<typeof modelSchema>;

/** A model with every default filled in. */
export interface Model extends ModelRecord {
  upstreamModel: string;
  family: string;
  title: string;
  created: number;
  owned_by: string;
  /** deprecated_at as Unix milliseconds, or null. */
  retiresAt: number | null;
}

export function completeModel(record: ModelRecord, providerType: string | undefined, createdDefault: number): Model {
  return {
    ...record,
    upstreamModel: record.upstreamModel ?? record.id,
    family: record.family ?? providerType ?? record.provider,
    title: record.title ?? record.id,
    created: record.created ?? createdDefault,
    owned_by: record.owned_by ?? record.provider,
    retiresAt: record.deprecated_at === null ? null : Date.parse(record.deprecated_at),
  };
}
