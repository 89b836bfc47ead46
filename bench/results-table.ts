// The markdown table of one run: absolutes per target, then Tollgate/peer and Tollgate/direct, and the lines that go with
// it into bench/RESULTS.md.

import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type { BenchPlan } from './bench-plan.ts';
import type { StreamsStep } from './concurrent-streams.ts';
import type { TargetReport } from './measure-target.ts';
import type { RateStep } from './paced-rate.ts';

type Value = number | string | undefined;

interface Row {
  measure: string;
  value(report: TargetReport, direct: TargetReport): Value;
  /** Which ratio columns make sense: "added" values have no direct counterpart, memory of the simulator is no baseline. */
  ratios: 'both' | 'peer' | 'none';
}

const MB = 2 ** 20;
const added = (value: number, base: number, isDirect: boolean): Value => (isDirect ? undefined : value - base);
const isDirect = (report: TargetReport): boolean => report.name === 'direct';
const sustainedStep = (report: TargetReport): RateStep | undefined => report.sustained.steps.find((step) => step.offered === report.sustained.sustained);

/** The stream step of that size, if the target got to it. */
const streamsStep = (report: TargetReport, streams: number): StreamsStep | undefined => report.streams.steps.find((step) => step.streams === streams);
const megabytes = (bytes: number | undefined): Value => (bytes === undefined ? undefined : bytes / MB);

function rows(plan: BenchPlan): Row[] {
  const mostStreams = Math.max(...plan.streamSteps);
  return [
    { measure: 'concurrency 1, round trip p50 (ms)', value: (r) => r.roundTrip.latency.p50, ratios: 'both' },
    { measure: 'concurrency 1, round trip p99 (ms)', value: (r) => r.roundTrip.latency.p99, ratios: 'both' },
    { measure: '**added latency p50 (ms)**', value: (r, d) => added(r.roundTrip.latency.p50, d.roundTrip.latency.p50, isDirect(r)), ratios: 'peer' },
    { measure: '**added latency p99 (ms)**', value: (r, d) => added(r.roundTrip.latency.p99, d.roundTrip.latency.p99, isDirect(r)), ratios: 'peer' },
    { measure: 'concurrency 1, errors', value: (r) => r.roundTrip.errors, ratios: 'none' },
    { measure: `**${plan.saturationConnections} connections, req/s**`, value: (r) => r.saturation.requestsPerSecond, ratios: 'both' },
    { measure: `${plan.saturationConnections} connections, p50 / p99 (ms, whole)`, value: (r) => `${r.saturation.p50Ms} / ${r.saturation.p99Ms}`, ratios: 'none' },
    { measure: `${plan.saturationConnections} connections, non-2xx / errors`, value: (r) => `${r.saturation.non2xx} / ${r.saturation.errors}`, ratios: 'none' },
    { measure: '**CPU per request (µs)** (direct: simulator)', value: (r) => r.saturation.cpuMicrosecondsPerRequest, ratios: 'both' },
    { measure: `**sustained req/s, ${plan.sustainedUpstreamMs} ms upstream** (p99 < 1 s, 0 errors)`, value: (r) => r.sustained.sustained, ratios: 'both' },
    { measure: 'sustained: p50 at that rate (ms, from scheduled send)', value: (r) => sustainedStep(r)?.latency.p50, ratios: 'both' },
    { measure: 'sustained: p99 at that rate (ms, from scheduled send)', value: (r) => sustainedStep(r)?.latency.p99, ratios: 'both' },
    { measure: `stream (${plan.streamChunks} chunks), first token p50 (ms)`, value: (r) => r.firstToken.firstToken.p50, ratios: 'both' },
    { measure: `stream (${plan.streamChunks} chunks), first token p99 (ms)`, value: (r) => r.firstToken.firstToken.p99, ratios: 'both' },
    { measure: '**added first token p50 (ms)**', value: (r, d) => added(r.firstToken.firstToken.p50, d.firstToken.firstToken.p50, isDirect(r)), ratios: 'peer' },
    { measure: '**added first token p99 (ms)**', value: (r, d) => added(r.firstToken.firstToken.p99, d.firstToken.firstToken.p99, isDirect(r)), ratios: 'peer' },
    { measure: 'first token, errors / incomplete', value: (r) => `${r.firstToken.errors} / ${r.firstToken.incomplete}`, ratios: 'none' },
    { measure: `**concurrent streams held** (tried ${plan.streamSteps.join(', ')})`, value: (r) => r.streams.held, ratios: 'both' },
    { measure: 'most streams open at the same moment', value: (r) => Math.max(0, ...r.streams.steps.filter((step) => step.passed).map((step) => step.peakOpen)), ratios: 'both' },
    { measure: 'RSS idle (MB) (direct: simulator)', value: (r) => r.memory.idle / MB, ratios: 'peer' },
    { measure: '**RSS peak, whole run (MB)**', value: (r) => r.memory.peak / MB, ratios: 'peer' },
    { measure: `**RSS peak while ${mostStreams} streams are held (MB)**`, value: (r) => megabytes(streamsStep(r, mostStreams)?.rssPeak), ratios: 'peer' },
    { measure: `RSS ${plan.rssSettleSeconds} s after the load (MB)`, value: (r) => megabytes(r.memory.after), ratios: 'peer' },
  ];
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const magnitude = Math.abs(value);
  if (magnitude >= 100 || Number.isInteger(value)) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(magnitude >= 10 ? 1 : 3);
}

const formatValue = (value: Value): string => (value === undefined ? '—' : typeof value === 'string' ? value : formatNumber(value));

function ratio(numerator: Value, denominator: Value): string {
  if (typeof numerator !== 'number' || typeof denominator !== 'number' || !Number.isFinite(numerator) || !Number.isFinite(denominator) || denominator === 0) return '—';
  return `${(numerator / denominator).toFixed(2)}×`;
}

/** The run's table; `reports` holds direct first, then tollgate, then the peer when there is one. */
export function renderTable(reports: readonly TargetReport[], plan: BenchPlan): string {
  const [direct, tollgate, peer] = reports;
  if (!direct || !tollgate) throw new Error('the table needs the direct and tollgate reports');
  const header = ['measure', 'direct', 'tollgate', ...(peer ? [peer.name, `tollgate / ${peer.name}`] : []), 'tollgate / direct'];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, index) => (index === 0 ? '---' : '---:')).join('|')}|`];
  for (const row of rows(plan)) {
    const values = [row.value(direct, direct), row.value(tollgate, direct), ...(peer ? [row.value(peer, direct)] : [])];
    const cells = [row.measure, ...values.map(formatValue)];
    if (peer) cells.push(row.ratios === 'none' ? '—' : ratio(values[1], values[2]));
    cells.push(row.ratios === 'both' ? ratio(values[1], values[0]) : '—');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

/** Where each stepped phase stopped, so a "sustained" or "held" figure reads with the step that failed after it (or with none). */
export function renderStepNotes(reports: readonly TargetReport[]): string[] {
  const notes: string[] = [];
  for (const report of reports) {
    const failedRate = report.sustained.steps.find((step) => !step.passed);
    notes.push(
      failedRate
        ? `${report.name}: paced ${failedRate.offered} req/s failed (p99 ${formatNumber(failedRate.latency.p99)} ms, errors ${failedRate.errors}, ` +
            `${failedRate.latency.count}/${failedRate.sent} completed, scheduler lag ≤ ${formatNumber(failedRate.schedulerLagMs)} ms)`
        : `${report.name}: passed every paced rate tried, so it sustains at least ${report.sustained.sustained} req/s`,
    );
    const failedStreams = report.streams.steps.find((step) => !step.passed);
    if (failedStreams) {
      notes.push(`${report.name}: ${failedStreams.streams} streams at once failed (errors ${failedStreams.errors}, incomplete ${failedStreams.incomplete}, ${failedStreams.peakOpen} open together)`);
    }
    // A step's RSS is read as "while N streams are held": say so when fewer than N were ever open at one moment (the
    // target started the last of them after the first had ended), or the figure names more streams than it measured.
    for (const step of report.streams.steps) {
      if (step.passed && step.peakOpen < step.streams) {
        notes.push(`${report.name}: of the ${step.streams} streams fired at once, at most ${step.peakOpen} were open at the same moment; its RSS figure is for those`);
      }
    }
  }
  return notes;
}

export function machineLine(): string {
  const processors = cpus();
  return `${processors.length} cores, ${processors[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}, ${process.platform}/${process.arch}`;
}

export function planLine(plan: BenchPlan): string {
  return (
    `concurrency 1: ${plan.roundTripRequests.toLocaleString('en-US')} requests after ${plan.roundTripWarmup} warm-up, one kept-alive connection, hrtime; ` +
    `saturation: autocannon, ${plan.saturationConnections} connections × ${plan.saturationSeconds} s; ` +
    `sustained: ${plan.rateWarmupSeconds} s unmeasured, then paced steps ${plan.rateSteps.join(', ')} req/s × ${plan.rateStepSeconds} s, latency from scheduled send; ` +
    `first token: ${plan.firstTokenStreams} streams after ${plan.firstTokenWarmup} warm-up, one connection; ` +
    `streams held: ${plan.streamHeldChunks} chunks ${plan.streamChunkDelayMs} ms apart (${(plan.streamHeldChunks * plan.streamChunkDelayMs) / 1000} s a stream); RSS sampled every ${plan.rssSampleMs} ms. ` +
    `Load generator, simulator and gateway share the machine; targets run one after another.`
  );
}

const RESULTS_PREAMBLE =
  '# Benchmark results\n\nAppended by `npm run bench` (bench/main.ts), one section per run, newest last. DESIGN §8 says how to read them: ' +
  'ratios within one run, CPU per request; absolutes vary with the shared machine.\n';

export function appendResults(path: string, title: string, plan: BenchPlan, table: string, notes: readonly string[]): void {
  if (!existsSync(path)) writeFileSync(path, RESULTS_PREAMBLE);
  const noteLines = notes.map((note) => `- ${note}`).join('\n');
  appendFileSync(path, `\n## ${title}\n\n${machineLine()}. ${planLine(plan)}\n\n${table}\n${noteLines ? `\n${noteLines}\n` : ''}`);
}
