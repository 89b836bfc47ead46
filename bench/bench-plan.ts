// Command line → the sizes of every measurement. `--quick` keeps the whole run under two minutes, the full run under fifteen.

export type PeerName = 'portkey';

export interface BenchPlan {
  mode: 'quick' | 'full';
  peer: PeerName | undefined;
  /** Concurrency-1 round trips: unmeasured warm-up, then measured requests. */
  roundTripWarmup: number;
  roundTripRequests: number;
  /** Rounds of the latency floor (bench/proxy-floor.ts: a bare proxy against direct, each at the round-trip sizes). */
  latencyFloorRounds: number;
  saturationConnections: number;
  saturationSeconds: number;
  /** Simulated upstream latency of the sustained-rate phase, milliseconds. */
  sustainedUpstreamMs: number;
  /** Offered rates tried in order (requests/s); the phase stops at the first that fails. */
  rateSteps: number[];
  rateStepSeconds: number;
  /** Unmeasured pacing at the first rate before the steps, so connections and upstream pools are open. */
  rateWarmupSeconds: number;
  /** Chunks per streamed reply in the first-token phase. */
  streamChunks: number;
  firstTokenWarmup: number;
  firstTokenStreams: number;
  /** Simultaneous streams tried in order; the phase stops at the first with an error. */
  streamSteps: number[];
  /**
   * The concurrent-streams phase: chunks per reply and the delay between them. Each stream lasts their product (8 s), longer
   * than a gateway on this machine took to open 1,000 of them while relaying the first (up to ~5 s measured), so the RSS is
   * read with every stream of the step open at once. At 20 chunks (1 s) the first streams ended before the last opened:
   * 507–745 of 1,000 were open together through Tollgate in earlier full runs, and the RSS figure was for those.
   */
  streamHeldChunks: number;
  streamChunkDelayMs: number;
  rssSampleMs: number;
  /** Each feature's cost (the request log; the key's limits with the channels): interleaved on/off saturation pairs, and each run's length. */
  featureCostRounds: number;
  featureCostSeconds: number;
  /** The paired phase (bench/paired-saturation.ts): rounds in which every target is loaded in turn, and each run's length. */
  pairedRounds: number;
  pairedSeconds: number;
  /** The same with a long conversation as the body (targets.ts LONG_CHAT_BODY): what each target costs per byte. */
  pairedLongRounds: number;
  /** Wait after a gateway's last load before reading its RSS "after". */
  rssSettleSeconds: number;
}

const USAGE = 'usage: npm run bench [-- --quick] [-- --peer portkey]';

export function parsePlan(argv: readonly string[]): BenchPlan {
  let quick = false;
  let peer: PeerName | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--') continue;
    if (argument === '--quick') quick = true;
    else if (argument === '--peer' || argument?.startsWith('--peer=')) {
      const value = argument === '--peer' ? argv[++index] : argument.slice('--peer='.length);
      if (value !== 'portkey') throw new Error(`unknown peer "${value ?? ''}" (only "portkey")\n${USAGE}`);
      peer = value;
    } else if (argument === '--help' || argument === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else throw new Error(`unknown argument "${argument ?? ''}"\n${USAGE}`);
  }
  const common = { peer, saturationConnections: 50, sustainedUpstreamMs: 20, streamChunks: 20, streamHeldChunks: 160, streamChunkDelayMs: 50, rssSampleMs: 200 };
  return quick
    ? {
        ...common,
        mode: 'quick',
        // The concurrency-1 phase comes first, on a freshly started process: a gateway reaches its steady latency only after
        // some thousands of requests (JIT tiers, caches). After 200, Tollgate's p99 was 4.9–5.6 ms; after 6,000, 1.6 ms.
        roundTripWarmup: 5_000,
        roundTripRequests: 2_000,
        latencyFloorRounds: 1,
        saturationSeconds: 5,
        rateSteps: [250, 500, 1_000, 2_000, 4_000],
        rateStepSeconds: 1.5,
        rateWarmupSeconds: 1,
        firstTokenWarmup: 20,
        firstTokenStreams: 100,
        streamSteps: [250, 500],
        rssSettleSeconds: 10,
        featureCostRounds: 8,
        featureCostSeconds: 2,
        pairedRounds: 4,
        pairedSeconds: 3,
        pairedLongRounds: 2,
      }
    : {
        ...common,
        mode: 'full',
        roundTripWarmup: 10_000,
        roundTripRequests: 10_000,
        latencyFloorRounds: 3,
        saturationSeconds: 20,
        rateSteps: [250, 500, 1_000, 1_500, 2_000, 3_000, 4_000, 6_000, 8_000],
        rateStepSeconds: 5,
        rateWarmupSeconds: 2,
        firstTokenWarmup: 50,
        firstTokenStreams: 1_000,
        streamSteps: [250, 500, 1_000],
        rssSettleSeconds: 30,
        featureCostRounds: 16,
        featureCostSeconds: 4,
        pairedRounds: 8,
        pairedSeconds: 5,
        pairedLongRounds: 4,
      };
}
