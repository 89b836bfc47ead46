// `npm run bench:profile [-- --scenario chat|chat-long|chat-stream|chat-stream-long|messages|messages-long|messages-stream|messages-stream-long|all] [-- --seconds N] [-- --request-log off]` (issue 16): runs the
// gateway as `npm start` does under `--cpu-prof`, loads one scenario with autocannon (50 connections), and says where each
// request's CPU microseconds go: self time per area (Tollgate's own folders through the bundle's source map, each npm
// package, Node's internals, the garbage collector, native syscalls) and the top functions, as µs per request. The raw
// .cpuprofile stays in bench/profiles/ for a flame graph (Chrome DevTools or speedscope open it).

import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { installExitHandlers, stopChild, stopEverything } from './child-processes.ts';
import { cpuMicroseconds } from './process-stats.ts';
import { EVERYTHING_ON, SCENARIOS, startSimulator, startTollgate, type Scenario } from './targets.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const PROFILES = join(ROOT, 'bench', 'profiles');

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  /** Microseconds on the monotonic clock (the one process.hrtime reads, on Linux). */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function parseArguments(argv: readonly string[]): { scenarios: Scenario[]; seconds: number; top: number; requestLog: boolean } {
  let scenarios: Scenario[] = ['chat', 'chat-stream', 'messages', 'messages-stream'];
  let seconds = 8;
  let top = 15;
  let requestLog = true;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    const value = (): string => argv[++index] ?? '';
    if (argument === '--') continue;
    if (argument === '--scenario') {
      const name = value();
      if (name !== 'all' && !(name in SCENARIOS)) throw new Error(`unknown scenario "${name}" (${Object.keys(SCENARIOS).join(', ')}, all)`);
      scenarios = name === 'all' ? scenarios : [name as Scenario];
    } else if (argument === '--seconds') seconds = Number(value());
    else if (argument === '--top') top = Number(value());
    else if (argument === '--request-log') requestLog = value() !== 'off';
    else throw new Error(`unknown argument "${argument ?? ''}"`);
  }
  return { scenarios, seconds, top, requestLog };
}

/** Where a frame's code lives: Tollgate's source folder, an npm package, Node itself, or a native/VM bucket. */
function areaOf(frame: ProfileNode['callFrame'], bundle: SourceMap | undefined): { area: string; where: string } {
  const { url, functionName, lineNumber, columnNumber } = frame;
  if (url === '') return { area: functionName.startsWith('(') ? functionName : 'native', where: '' };
  if (url.endsWith('dist/main.js') && bundle) {
    const entry = bundle.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number };
    const source = entry.originalSource?.replace(/^.*?\/src\//, 'src/') ?? 'dist/main.js';
    return { area: source.split('/').slice(0, 3).join('/'), where: `${source}:${(entry.originalLine ?? 0) + 1}` };
  }
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (inPackage) return { area: inPackage[1]!, where: `${url.slice(url.lastIndexOf('node_modules/') + 13)}:${lineNumber + 1}` };
  if (url.startsWith('node:')) return { area: 'node', where: `${url}:${lineNumber + 1}` };
  return { area: 'other', where: url };
}

/** Self time per node over the samples taken during the measured load (not start-up, warm-up or the shutdown after it). */
function summarise(profile: CpuProfile, bundle: SourceMap | undefined, cpuPerRequest: number, top: number, load: { from: number; to: number }): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfTime = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    at += delta;
    if (at >= load.from && at <= load.to) selfTime.set(id, (selfTime.get(id) ?? 0) + delta);
  });
  const idle = [...selfTime].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)').reduce((sum, [, time]) => sum + time, 0);
  const busy = [...selfTime.values()].reduce((sum, time) => sum + time, 0) - idle;
  const areas = new Map<string, number>();
  const functions = new Map<string, number>();
  for (const [id, time] of selfTime) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const { area, where } = areaOf(frame, bundle);
    areas.set(area, (areas.get(area) ?? 0) + time);
    const name = `${frame.functionName || '(anonymous)'} ${where}`.trim();
    functions.set(name, (functions.get(name) ?? 0) + time);
  }
  const line = (name: string, time: number): string => `| ${name} | ${((time / busy) * 100).toFixed(1)} % | ${((time / busy) * cpuPerRequest).toFixed(1)} |`;
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1]);
  return [
    '| area (self time) | share | µs per request |',
    '|---|---:|---:|',
    ...sorted(areas).slice(0, top).map(([name, time]) => line(name, time)),
    '',
    '| function (self time) | share | µs per request |',
    '|---|---:|---:|',
    ...sorted(functions).slice(0, top).map(([name, time]) => line(`\`${name.replaceAll('|', '\\|')}\``, time)),
  ].join('\n');
}

async function profileScenario(
  scenario: Scenario,
  options: { seconds: number; top: number; requestLog: boolean },
  simulator: Awaited<ReturnType<typeof startSimulator>>,
): Promise<void> {
  const { seconds, top, requestLog } = options;
  const directory = join(PROFILES, requestLog ? scenario : `${scenario}-no-request-log`);
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  const target = await startTollgate(ROOT, simulator, stopChild, { ...EVERYTHING_ON, requestLog }, { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${directory}`] });
  const { path, body } = SCENARIOS[scenario];
  const load = (duration: number) => autocannon({ url: `${target.origin}${path}`, method: 'POST', headers: target.headers, body, connections: 50, duration, timeout: 10 });
  try {
    await load(2); // warm-up: JIT, pools, caches
    const loadStartMicroseconds = Number(process.hrtime.bigint() / 1000n);
    const cpuBefore = cpuMicroseconds(target.pid);
    const result = await load(seconds);
    const loadEndMicroseconds = Number(process.hrtime.bigint() / 1000n);
    const cpuPerRequest = (cpuMicroseconds(target.pid) - cpuBefore) / result.requests.total;
    await target.stop(); // SIGTERM: node writes the profile as it exits
    const file = readdirSync(directory).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error(`no profile written in ${directory}`);
    const profile = JSON.parse(readFileSync(join(directory, file), 'utf8')) as CpuProfile;
    const bundle = new SourceMap(JSON.parse(readFileSync(join(ROOT, 'dist', 'main.js.map'), 'utf8')) as ConstructorParameters<typeof SourceMap>[0]);
    console.log(`\n### ${scenario}${requestLog ? '' : ' (request log off)'}: ${(result.requests.total / result.duration).toFixed(0)} req/s, ${cpuPerRequest.toFixed(0)} µs CPU per request, non-2xx ${result.non2xx}\n`);
    console.log('Shares are of the busy samples taken during the measured load; µs = share × CPU per request.\n');
    console.log(summarise(profile, bundle, cpuPerRequest, top, { from: loadStartMicroseconds, to: loadEndMicroseconds }));
  } finally {
    await target.stop();
  }
}

installExitHandlers();
try {
  const { scenarios, ...options } = parseArguments(process.argv.slice(2));
  const simulator = await startSimulator(ROOT, 20);
  for (const scenario of scenarios) await profileScenario(scenario, options, simulator);
} finally {
  await stopEverything();
}
