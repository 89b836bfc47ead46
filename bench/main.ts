// `npm run bench [-- --quick] [-- --peer portkey]` (DESIGN §8): starts the simulator, Tollgate and optionally the peer as
// child processes, measures each target in turn, prints one markdown table and appends it to bench/RESULTS.md.

import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parsePlan, type BenchPlan } from './bench-plan.ts';
import { installExitHandlers, stopChild, stopEverything } from './child-processes.ts';
import { channelPickNote, measureChannelPick } from './channel-pick.ts';
import { measurePairedSaturation, pairedSaturationNotes, type PairedSaturation } from './paired-saturation.ts';
import { measureProxyFloor, proxyFloorNotes, startBareProxy } from './proxy-floor.ts';
import { measureTarget, type TargetReport } from './measure-target.ts';
import { measureFeatureCost, type FeatureCost } from './feature-cost.ts';
import { appendResults, machineLine, renderStepNotes, renderTable } from './results-table.ts';
import { directTarget, EVERYTHING_ON, LONG_CHAT_BODY, SCENARIOS, startPortkey, startSimulator, startTollgate, type GatewayFeatures, type SimulatorControl, type Target } from './targets.ts';

const BENCH_DIRECTORY = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(BENCH_DIRECTORY, '..');
const RESULTS_PATH = join(BENCH_DIRECTORY, 'RESULTS.md');

/** Lets a freshly started process finish its start-up work before "idle" memory is read. */
const SETTLE_AFTER_START_MS = 500;

function peerVersion(): string {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')) as { version?: string };
  return manifest.version ?? 'unknown';
}

/** Starts a gateway, measures it, and stops it, so only one gateway process exists while any target is under load. */
async function measureGateway(start: () => Promise<Target>, simulator: SimulatorControl, plan: BenchPlan): Promise<TargetReport> {
  const target = await start();
  try {
    await sleep(SETTLE_AFTER_START_MS);
    return await measureTarget(target, simulator, plan);
  } finally {
    await target.stop();
  }
}

async function run(plan: BenchPlan): Promise<void> {
  const startedAt = new Date();
  const peerName = plan.peer ? `${plan.peer} ${peerVersion()}` : undefined;
  console.error(`tollgate bench, ${plan.mode} mode${peerName ? `, peer ${peerName}` : ''}; ${machineLine()}`);

  const simulator = await startSimulator(ROOT, plan.streamChunks);
  await sleep(SETTLE_AFTER_START_MS);
  const reports: TargetReport[] = [await measureTarget(directTarget(simulator), simulator, plan)];
  reports.push(await measureGateway(() => startTollgate(ROOT, simulator, stopChild), simulator, plan));
  if (plan.peer === 'portkey') reports.push(await measureGateway(() => startPortkey(ROOT, simulator, stopChild), simulator, plan));
  // The floor under the table's figures: what a bare Node proxy hop adds at concurrency 1, beside direct, and what it
  // serves at saturation, in this run.
  const floor = await measureProxyFloor(ROOT, simulator, plan);
  // The goals' ratios again, from targets measured seconds apart in alternating rounds rather than minutes apart; then the
  // same targets with a long conversation as the body (what each costs per byte of it).
  const [paired, pairedLong] = await measurePaired(simulator, plan);
  // DESIGN §13 and issue 16: what the request log, and the key's limits with the channels, cost on the hot path, each
  // measured in the same run by interleaved runs of the gateway with it on and off, everything else on (one pair after
  // another, so the shared machine's drift falls on both sides alike).
  const costOf = (feature: keyof GatewayFeatures): Promise<FeatureCost> =>
    measureFeatureCost((on) => startTollgate(ROOT, simulator, stopChild, { ...EVERYTHING_ON, [feature]: on }), simulator, plan.saturationConnections, plan.featureCostSeconds, plan.featureCostRounds);
  const logCost = await costOf('requestLog');
  const limitsCost = await costOf('limitsAndChannels');

  const table = renderTable(reports, plan);
  const tollgate = reports.find((report) => report.name === 'tollgate');
  const tollgateAddedP99 = tollgate ? tollgate.roundTrip.latency.p99 - reports[0]!.roundTrip.latency.p99 : undefined;
  const peer = reports.find((report) => report.name === 'portkey');
  const notes = [
    ...renderStepNotes(reports),
    ...proxyFloorNotes(floor, tollgateAddedP99, { tollgate: tollgate?.saturation, peer: peer?.saturation }),
    ...pairedSaturationNotes(paired),
    ...pairedSaturationNotes(pairedLong, `a ${(LONG_CHAT_BODY.length / 1024).toFixed(0)} KB conversation as the body`),
    featureCostNote('request log', logCost),
    featureCostNote("the key's limits (requests and tokens a minute, spend, models, expiry) and two channels a vendor", limitsCost),
    // Issue 15: what choosing a channel costs per request, in this process once the gateways are stopped.
    channelPickNote(measureChannelPick()),
  ];
  const seconds = Math.round((Date.now() - startedAt.getTime()) / 1000);
  const title = `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC · ${plan.mode}${peerName ? ` · peer ${peerName}` : ''} · ${seconds} s`;
  console.log(`\n${title}\n${machineLine()}\n\n${table}\n${notes.map((note) => `- ${note}`).join('\n')}`);
  appendResults(RESULTS_PATH, title, plan, table, notes);
  console.error(`\nappended to ${RESULTS_PATH}`);
}

/**
 * Tollgate, the bare proxy and the peer (if any) started side by side and loaded in turn (bench/paired-saturation.ts): with
 * the bench's short chat request, then with a long conversation.
 */
async function measurePaired(simulator: SimulatorControl, plan: BenchPlan): Promise<[PairedSaturation, PairedSaturation]> {
  const targets: Target[] = [];
  try {
    targets.push(await startTollgate(ROOT, simulator, stopChild));
    targets.push(await startBareProxy(ROOT, simulator));
    if (plan.peer === 'portkey') targets.push(await startPortkey(ROOT, simulator, stopChild));
    const short = await measurePairedSaturation(targets, simulator, plan.saturationConnections, plan.pairedSeconds, plan.pairedRounds);
    const long = await measurePairedSaturation(targets, simulator, plan.saturationConnections, plan.pairedSeconds, plan.pairedLongRounds, SCENARIOS['chat-long']);
    return [short, long];
  } finally {
    for (const target of targets) await target.stop();
  }
}

/** Saturation req/s and CPU per request with a feature on and off (DESIGN §13 asks ≤ 5 % fewer req/s for the request log). */
function featureCostNote(feature: string, cost: FeatureCost): string {
  const spread = `${cost.pairLosses[0]!.toFixed(1)} … ${cost.pairLosses.at(-1)!.toFixed(1)} %`;
  return (
    `${feature} (${cost.rounds} rounds, each a fresh gateway with it on and one with it off, ${cost.secondsPerRun} s each): ${cost.on.requestsPerSecond.toFixed(0)} req/s on, ` +
    `${cost.off.requestsPerSecond.toFixed(0)} req/s off (median pair: ${cost.lossPercent.toFixed(1)} % fewer with it on; pairs ${spread}); ` +
    `CPU per request ${cost.on.cpuMicrosecondsPerRequest.toFixed(0)} µs on, ${cost.off.cpuMicrosecondsPerRequest.toFixed(0)} µs off (median pair +${cost.cpuPercent.toFixed(1)} %)`
  );
}

installExitHandlers();
try {
  await run(parsePlan(process.argv.slice(2)));
} catch (error) {
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exitCode = 1;
} finally {
  await stopEverything();
}
