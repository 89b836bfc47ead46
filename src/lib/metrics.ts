import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric, type MetricValueWithName } from 'prom-client';

/** The gateway's Prometheus metrics, one registry per app (tests build several apps in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new TalliedCounter(this.registry, 'tollgate_http_requests_total', 'HTTP requests answered', ['route', 'status']);
  readonly latency = new TalliedHistogram(this.registry, 'tollgate_http_request_duration_seconds', 'Time to answer a request (to the end of the body for streams)', ['route'], [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
  ]);
  readonly upstreamLatency = new TalliedHistogram(this.registry, 'tollgate_upstream_duration_seconds', 'Time until the vendor answered (headers)', ['provider', 'operation'], [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
  ]);
  readonly tokens = new TalliedCounter(this.registry, 'tollgate_tokens_total', 'Tokens billed', ['model', 'direction']);
  readonly charged = new TalliedCounter(this.registry, 'tollgate_money_charged_total', 'Money charged, in currency units', ['currency']);

  private readonly upstreamTimers = new Map<string, HistogramSeries>();
  /** Per model: its input and output token series (looked up once). */
  private readonly tokenCounters = new Map<string, { input: Tally; output: Tally }>();
  private chargedInCurrency: Tally | undefined;

  constructor(readonly currency: string) {
    collectDefaultMetrics({ register: this.registry, prefix: 'tollgate_' });
  }

  /**
   * Mail waiting to be sent and given up on (DESIGN §15), read from the outbox when /metrics is scraped. A failing read
   * leaves the last values: a database blip must not fail the scrape.
   */
  watchMail(counts: () => Promise<{ pending: number; failed: number }>): void {
    new Gauge({
      name: 'tollgate_mail_messages',
      help: 'Mail messages in the outbox by status (pending: queued or retrying; failed: given up)',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        try {
          const current = await counts();
          this.set({ status: 'pending' }, current.pending);
          this.set({ status: 'failed' }, current.failed);
        } catch {
          // keep the last values
        }
      },
    });
  }

  /**
   * Upstream channels (DESIGN §12), read from their health when /metrics is scraped — nothing on the request path. Series
   * carry `channel="<provider>/<channel id>"`; the state gauge is 1 for the channel's current state, 0 for the others.
   */
  watchChannels(
    statuses: () => ReadonlyArray<{ provider: string; channel: string; health: { state: string; requests: number; errors: number; errorRate: number; latencyMs: { p50: number | null; p99: number | null } } }>,
  ): void {
    const label = (status: { provider: string; channel: string }): string => `${status.provider}/${status.channel}`;
    new Counter({
      name: 'tollgate_upstream_channel_requests_total',
      help: 'Attempts sent through each upstream channel (this process)',
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of statuses()) this.inc({ channel: label(status) }, status.health.requests);
      },
    });
    new Counter({
      name: 'tollgate_upstream_channel_errors_total',
      help: 'Failed attempts (connection error, timeout, 429, 5xx) of each upstream channel (this process)',
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of statuses()) this.inc({ channel: label(status) }, status.health.errors);
      },
    });
    new Gauge({
      name: 'tollgate_upstream_channel_error_rate',
      help: 'Failed share of the last 256 attempts of each upstream channel',
      labelNames: ['channel'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of statuses()) this.set({ channel: label(status) }, status.health.errorRate);
      },
    });
    new Gauge({
      name: 'tollgate_upstream_channel_latency_ms',
      help: 'Time to the response head over the last 256 answered attempts of each upstream channel',
      labelNames: ['channel', 'quantile'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of statuses()) {
          const { p50, p99 } = status.health.latencyMs;
          if (p50 !== null) this.set({ channel: label(status), quantile: '0.5' }, p50);
          if (p99 !== null) this.set({ channel: label(status), quantile: '0.99' }, p99);
        }
      },
    });
    new Gauge({
      name: 'tollgate_upstream_channel_state',
      help: 'State of each upstream channel: 1 for its current state (healthy, cooling, probing)',
      labelNames: ['channel', 'state'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of statuses()) {
          for (const state of ['healthy', 'cooling', 'probing']) this.set({ channel: label(status), state }, status.health.state === state ? 1 : 0);
        }
      },
    });
  }

  /** Records a vendor call's time to its response head; labelled children are cached (the call is on the hot path). */
  readonly observeUpstream = (provider: string, operation: string, seconds: number): void => {
    const key = `${provider} ${operation}`;
    let timer = this.upstreamTimers.get(key);
    if (!timer) this.upstreamTimers.set(key, (timer = this.upstreamLatency.labels(provider, operation)));
    timer.observe(seconds);
  };

  /** Counts a call's billed tokens (hot path: labelled children cached per model). */
  countTokens(model: string, input: number, output: number): void {
    let counters = this.tokenCounters.get(model);
    if (!counters) this.tokenCounters.set(model, (counters = { input: this.tokens.series(model, 'input'), output: this.tokens.series(model, 'output') }));
    if (input > 0) counters.input.value += input;
    if (output > 0) counters.output.value += output;
  }

  /** Counts money charged for a request, in currency units (hot path: the series is looked up once). */
  countCharged(units: number): void {
    (this.chargedInCurrency ??= this.charged.series(this.currency)).value += units;
  }
}

/** The series of these label values (in `names` order) in `table`, made by `make` on first use. */
function seriesOf<Series>(table: Map<string, Series>, names: readonly string[], values: readonly string[], make: (labels: Record<string, string>) => Series): Series {
  const key = values.join('\u0000');
  let series = table.get(key);
  if (!series) {
    const labels: Record<string, string> = {};
    names.forEach((name, index) => (labels[name] = values[index] ?? ''));
    series = make(labels);
    table.set(key, series);
  }
  return series;
}

/** One labelled series of a TalliedCounter: add to `value` (never subtract). */
export interface Tally {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
}

/**
 * A Prometheus counter counted in plain numbers on the request path: prom-client hashes the label object on every `inc`,
 * a labelled child's too, so each series is a Tally the caller keeps and adds to, and the counter reads the sums when
 * /metrics is scraped (its `collect`).
 */
export class TalliedCounter {
  private readonly tallies = new Map<string, Tally>();

  constructor(registry: Registry, name: string, help: string, private readonly labelNames: readonly string[]) {
    const tallies = this.tallies;
    new Counter({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        // A series looked up but never added to is not shown (as prom-client's own children are not until their first inc).
        for (const tally of tallies.values()) if (tally.value > 0) this.inc(tally.labels, tally.value);
      },
    });
  }

  /** The series of these label values, in `labelNames` order (made on first use; keep it). */
  series(...values: string[]): Tally {
    return seriesOf(this.tallies, this.labelNames, values, (labels) => ({ labels, value: 0 }));
  }
}

/** One labelled series of a TalliedHistogram. */
export interface HistogramSeries {
  observe(value: number): void;
}

class BucketCounts implements HistogramSeries {
  /** Observations per bucket (not cumulative): `counts[i]` counts values in (bounds[i-1], bounds[i]]. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const { bounds } = this;
    for (let index = 0; index < bounds.length; index++) {
      if (value <= bounds[index]!) {
        this.counts[index]! += 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }
}

/**
 * A Prometheus histogram observed in plain numbers on the request path: prom-client's `observe` converts, validates and
 * hashes the labels on every call, a labelled child's too (~1.5 µs an observation, two a request). Each series counts
 * into its own array; the registry reads them when /metrics is scraped, written as prom-client writes a histogram:
 * cumulative `_bucket` lines with `le` (and `+Inf`), `_sum` and `_count`, a series shown from its first observation.
 */
export class TalliedHistogram {
  private readonly series = new Map<string, BucketCounts>();

  constructor(
    registry: Registry,
    private readonly name: string,
    help: string,
    private readonly labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    const series = this.series;
    const values = (): MetricValueWithName<string>[] => this.values();
    const metric = {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: values() }),
      reset: () => {
        for (const counts of series.values()) {
          counts.counts.fill(0);
          counts.sum = 0;
          counts.count = 0;
        }
      },
    };
    registry.registerMetric(metric as unknown as Metric);
  }

  /** The series of these label values, in `labelNames` order (made on first use; keep it). */
  labels(...values: string[]): HistogramSeries {
    return seriesOf(this.series, this.labelNames, values, (labels) => new BucketCounts(labels, this.bounds));
  }

  private values(): MetricValueWithName<string>[] {
    const lines: MetricValueWithName<string>[] = [];
    for (const counts of this.series.values()) {
      if (counts.count === 0) continue;
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += counts.counts[index]!;
        lines.push({ labels: { le: bound, ...counts.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      lines.push({ labels: { le: '+Inf', ...counts.labels }, value: counts.count, metricName: `${this.name}_bucket` });
      lines.push({ labels: counts.labels, value: counts.sum, metricName: `${this.name}_sum` });
      lines.push({ labels: counts.labels, value: counts.count, metricName: `${this.name}_count` });
    }
    return lines;
  }
}
