import type { ChannelRecord } from '../../features/catalog/catalog.ts';
import { ChannelHealth } from './channel-health.ts';

/** A channel as the router holds it: its record, health, and the smooth weighted round-robin counter. */
export class RoutedChannel {
  /** Smooth weighted round-robin: grows by the weight on each pick among its peers, drops by their total when chosen. */
  current = 0;
  readonly bit: number;
  private readonly serves: ReadonlySet<string> | null;

  constructor(
    readonly provider: string,
    readonly record: ChannelRecord,
    readonly index: number,
    readonly health: ChannelHealth,
  ) {
    this.bit = 1 << index;
    this.serves = record.models === null ? null : new Set(record.models);
  }

  get id(): string {
    return this.record.id;
  }

  get weight(): number {
    return this.record.weight;
  }

  /** `<provider>/<channel id>`: the label of its metrics. */
  get label(): string {
    return `${this.provider}/${this.record.id}`;
  }

  servesModel(model: string): boolean {
    return this.serves === null || this.serves.has(model);
  }
}

/**
 * The channels of one provider, arranged once when they change: channels with weight > 0 grouped in tiers by priority,
 * highest first. `pick` walks the tiers and, in the first tier with a channel that may take the request, chooses by smooth
 * weighted round-robin (nginx's): over any run of requests each channel's share matches its weight within one request,
 * with no randomness and no allocation. A tier whose channels all cool, are tried, or do not serve the model gives way
 * to the next.
 */
export class ChannelSet {
  readonly channels: readonly RoutedChannel[];
  private readonly tiers: ReadonlyArray<readonly RoutedChannel[]>;

  constructor(provider: string, records: readonly ChannelRecord[], healthOf: (label: string, record: ChannelRecord) => ChannelHealth) {
    this.channels = records.map((record, index) => new RoutedChannel(provider, record, index, healthOf(`${provider}/${record.id}`, record)));
    const byPriority = new Map<number, RoutedChannel[]>();
    for (const channel of this.channels) {
      if (channel.weight <= 0) continue;
      const tier = byPriority.get(channel.record.priority) ?? [];
      tier.push(channel);
      byPriority.set(channel.record.priority, tier);
    }
    this.tiers = [...byPriority.entries()].sort(([a], [b]) => b - a).map(([, tier]) => tier);
  }

  /** The channel for the next attempt of a request for `model`, skipping channels in `tried`; undefined when none may take it. */
  pick(model: string, tried: number, now: number): RoutedChannel | undefined {
    for (const tier of this.tiers) {
      let best: RoutedChannel | undefined;
      let total = 0;
      for (const channel of tier) {
        if ((tried & channel.bit) !== 0 || !channel.servesModel(model) || !channel.health.available(now)) continue;
        channel.current += channel.weight;
        total += channel.weight;
        if (best === undefined || channel.current > best.current) best = channel;
      }
      if (best !== undefined) {
        best.current -= total;
        return best;
      }
    }
    return undefined;
  }

  /**
   * The last resort when `pick` finds nothing because every channel that could serve `model` cools after failures or waits
   * for its probe (Envoy's "panic mode"): the one whose cool-down ends first, so a provider whose channels all failed a moment ago is still tried,
   * as it would be with one channel and no routing. Channels the vendor rate-limited are never chosen here: their
   * `retry-after` is honoured.
   */
  pickCooling(model: string, tried: number, now: number): RoutedChannel | undefined {
    let best: RoutedChannel | undefined;
    let bestUntil = Number.POSITIVE_INFINITY;
    for (const tier of this.tiers) {
      for (const channel of tier) {
        if ((tried & channel.bit) !== 0 || !channel.servesModel(model)) continue;
        // 0 for a probing channel whose probe is still out: it is the nearest to serving again.
        const until = channel.health.coolingUntil(now);
        if (until > 0 && channel.health.rateLimited) continue;
        if (until < bestUntil) {
          best = channel;
          bestUntil = until;
        }
      }
      if (best !== undefined) return best;
    }
    return undefined;
  }

  /**
   * When every channel that could serve `model` is cooling after a 429, the soonest moment one may be tried (Unix ms);
   * otherwise undefined. It turns "no channel left" into 429 with retry-after instead of 502.
   */
  rateLimitedUntil(model: string, now: number): number | undefined {
    let soonest: number | undefined;
    for (const tier of this.tiers) {
      for (const channel of tier) {
        if (!channel.servesModel(model)) continue;
        const until = channel.health.coolingUntil(now);
        if (until === 0 || !channel.health.rateLimited) return undefined;
        soonest = soonest === undefined ? until : Math.min(soonest, until);
      }
    }
    return soonest;
  }
}
