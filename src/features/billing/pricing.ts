import { NANOS_PER_MICRO, parseMoney, roundTo, scalePrice, toUsageNumber, type Money } from '../../lib/money.ts';
import type { Model } from '../catalog/model.ts';

/** Token counts as the vendors report them, split by how each kind is priced. */
export interface TokenUsage {
  /** Input tokens billed at the ordinary input price (cached tokens NOT included). */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** Cache writes with the default (5 minute) lifetime. */
  cacheWriteTokens: number;
  cacheWrite1hTokens: number;
}

export const emptyUsage = (): TokenUsage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite1hTokens: 0 });

export interface Cost {
  prompt: Money;
  completion: Money;
  total: Money;
}

const price = (text: string | undefined): Money | undefined => (text === undefined ? undefined : parseMoney(text));

export interface ModelPrices {
  input: Money;
  output: Money;
  cacheRead: Money;
  cacheWrite: Money;
  cacheWrite1h: Money;
}

/** Parsed once per catalog entry (a model object is replaced, never changed, when the catalog changes). */
const pricesCache = new WeakMap<Model, ModelPrices>();

/** Per-1,000-token prices of one model (DESIGN §5: cache read 0.1×, write 1.25×, 1-hour write 2× unless `pricing` says otherwise). */
export function modelPrices(model: Model): ModelPrices {
  let prices = pricesCache.get(model);
  if (!prices) {
    prices = computePrices(model);
    pricesCache.set(model, prices);
  }
  return prices;
}

function computePrices(model: Model): ModelPrices {
  const input = parseMoney(model.cost_context) ?? 0n;
  return {
    input,
    output: parseMoney(model.cost_completion) ?? 0n,
    cacheRead: price(model.pricing?.cache_read) ?? scalePrice(input, '0.1'),
    cacheWrite: price(model.pricing?.cache_write) ?? scalePrice(input, '1.25'),
    cacheWrite1h: price(model.pricing?.cache_write_1h) ?? scalePrice(input, '2'),
  };
}

/** One term of a cost: tokens × price per 1,000 tokens, in nano-units × 1,000 (exact). */
const scaledCost = (tokens: number, pricePer1k: Money): Money => (tokens > 0 ? BigInt(tokens) * pricePer1k : 0n);

const MICRO_SCALED = NANOS_PER_MICRO * 1000n;

/** A sum of scaled terms in nano-units, rounded once to micro-units. */
const fromScaled = (scaled: Money): Money => roundTo(scaled, MICRO_SCALED) / 1000n;

/**
 * The charge for a call: prompt (input and cache tokens) and completion costs, each rounded to micro-units,
 * and their sum as the total — so the `usage` numbers shown add up to exactly what is charged. Terms are added one by one,
 * not through arrays of pairs: it runs on every billed call.
 */
export function priceUsage(model: Model, usage: TokenUsage): Cost {
  const prices = modelPrices(model);
  let scaled = scaledCost(usage.inputTokens, prices.input);
  if (usage.cacheReadTokens > 0) scaled += scaledCost(usage.cacheReadTokens, prices.cacheRead);
  if (usage.cacheWriteTokens > 0) scaled += scaledCost(usage.cacheWriteTokens, prices.cacheWrite);
  if (usage.cacheWrite1hTokens > 0) scaled += scaledCost(usage.cacheWrite1hTokens, prices.cacheWrite1h);
  const prompt = fromScaled(scaled);
  const completion = fromScaled(scaledCost(usage.outputTokens, prices.output));
  return { prompt, completion, total: prompt + completion };
}

/** Fixed per-request price (image generation, media tasks). */
export function priceRequest(model: Model, count = 1): Cost {
  const each = parseMoney(model.cost_request ?? '0') ?? 0n;
  const total = roundTo(each * BigInt(count), NANOS_PER_MICRO);
  return { prompt: total, completion: 0n, total };
}

export const costNumbers = (cost: Cost): { prompt_cost: number; completion_cost: number; total_cost: number } => ({
  prompt_cost: toUsageNumber(cost.prompt),
  completion_cost: toUsageNumber(cost.completion),
  total_cost: toUsageNumber(cost.total),
});

/** Per-minute price (transcription) for whole seconds of audio. */
export function priceSeconds(model: Model, seconds: number): Cost {
  const perMinute = parseMoney(model.cost_minute ?? '0') ?? 0n;
  const total = roundTo((perMinute * BigInt(Math.max(0, Math.ceil(seconds)))) / 60n, NANOS_PER_MICRO);
  return { prompt: total, completion: 0n, total };
}
