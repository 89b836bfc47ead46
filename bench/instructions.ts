// `npm run bench:instructions [-- --requests N] [-- --warm-up N] [-- --top N] [-- --rounds N] [-- --against REV]` (issues 12 and 16):
// the instructions a chat call costs the gateway, with the request log on and off, counted by valgrind's callgrind; with
// `--against REV`, the working tree's build against that revision's (bench/compare-builds.ts bundles it), both with
// everything on, to judge a change by instructions rather than by seconds. Instructions depend less on
// what else the machine is doing than seconds: on this shared two-core machine one saturation run's CPU per request moves
// ±15 % from the next, more than the request log's whole cost, while a callgrind count of the same build moves ~2 % of the
// main thread's instructions. Not nothing: the batch writers flush by the clock, so how fast valgrind runs (the machine's
// other load) sets their batch sizes — the log's share read 3.5 % in one run beside other work and 7.2–9.3 % in three
// rounds after. `--rounds N` counts N fresh pairs and prints their median and spread.
//
// Each gateway runs as `npm start` runs it (the bundle, its node flags), under callgrind (~100× slower), both at once (a
// valgrind process runs one thread at a time). After a warm-up the counters are zeroed (just after a batch was written),
// N more calls are made (8 connections, no pause), the gateway is stopped (it writes what is queued) and callgrind's dump
// at its exit is read: per call, the main thread (JavaScript, SQLite, the scavenger's share) and all threads (with V8's
// compiler and concurrent marking, which settle later under valgrind and so move more between runs). The batch writers' flush intervals are stretched by the same factor as the
// slowdown, so their batches have the sizes of a real run. Instructions are user space only (no kernel time), and they do
// not count cache misses: read them beside the seconds of `npm run bench`, not instead. `--top N` lists the N native
// functions whose main-thread instructions differ most between log on and off. Needs `valgrind`.
import { execFileSync, spawn } from 'node:child_process';
import SqliteDatabase from 'better-sqlite3';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { childEnvironment, installExitHandlers, stopEverything } from './child-processes.ts';
import { bundleRevision, removeBundle } from './compare-builds.ts';
import { median } from './percentiles.ts';
import { benchKeyHeaders, CHAT_BODY, CHAT_PATH, EVERYTHING_ON, npmStartNode, startSimulator, tollgateVariables, type SimulatorControl } from './targets.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CONNECTIONS = 8;
/** The batch writers' intervals under valgrind (200 ms and 50 ms in a real run, ~100× faster). */
const STRETCHED_FLUSH = { TOLLGATE_REQUEST_LOG_FLUSH_MS: '20000', TOLLGATE_LEDGER_FLUSH_MS: '5000' };
/** vgdb finds the process by a file named after these; a fixed prefix and HOST keep the two sides agreeing. */
const VGDB_PREFIX = join(tmpdir(), 'tollgate-vgdb');
const VGDB_HOST = '127.0.0.1';

interface Options {
  requests: number;
  warmUp: number;
  top: number;
  /** Fresh pairs counted one after another: their spread is the tool's own precision. */
  rounds: number;
  /** A revision whose build is counted beside the working tree's (instead of the log on beside the log off). */
  against: string | undefined;
}

/** One side of a pair: which bundle runs, with the request log on or off. */
interface Variant {
  label: string;
  bundle: string;
  requestLog: boolean;
}

function parseArguments(argv: readonly string[]): Options {
  const options: Options = { requests: 4_000, warmUp: 6_000, top: 0, rounds: 1, against: undefined };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--') continue;
    if (argument === '--against') {
      options.against = argv[++index] ?? '';
      continue;
    }
    const value = Number(argv[index + 1]);
    if (argument === '--requests') options.requests = value;
    else if (argument === '--warm-up') options.warmUp = value;
    else if (argument === '--top') options.top = value;
    else if (argument === '--rounds') options.rounds = value;
    else throw new Error(`unknown argument "${argument ?? ''}" (--requests N, --warm-up N, --top N, --rounds N, --against REV)`);
    index++;
    if (!Number.isInteger(value) || value < 0) throw new Error(`${argument} takes a whole number`);
  }
  if (options.requests < 100) throw new Error('--requests ≥ 100');
  if (options.rounds < 1) throw new Error('--rounds ≥ 1');
  return options;
}

interface Count {
  variant: Variant;
  /** Instructions per call, main thread and all threads. */
  main: number;
  all: number;
  /** The main thread's dump (callgrind_annotate reads it for --top). */
  mainDump: string | undefined;
  directory: string;
}

async function countInstructions(simulator: SimulatorControl, variant: Variant, options: Options, port: number): Promise<Count> {
  const { requestLog } = variant;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-instructions-'));
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-callgrind-'));
  const asStarted = npmStartNode(ROOT);
  const environment = {
    ...childEnvironment(tollgateVariables(port, dataDir, simulator, requestLog)),
    // vgdb names its files after HOST: the gateway's own HOST setting is this address too.
    HOST: VGDB_HOST,
    ...asStarted.environment,
    ...STRETCHED_FLUSH,
  };
  const valgrind = ['--tool=callgrind', '--vgdb=yes', `--vgdb-prefix=${VGDB_PREFIX}`, '--smc-check=all-non-file', '--separate-threads=yes', `--callgrind-out-file=${directory}/callgrind.%p`];
  // The node flags of `npm start` (package.json), as every bench tool uses them.
  const child = spawn('valgrind', [...valgrind, process.execPath, ...asStarted.flags, variant.bundle], { cwd: ROOT, env: environment, stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4_000);
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const control = (command: string[]): void => {
    execFileSync('callgrind_control', [`--vgdb-prefix=${VGDB_PREFIX}`, ...command, String(child.pid)], { env: { ...process.env, HOST: VGDB_HOST }, stdio: 'ignore' });
  };
  try {
    const origin = `http://127.0.0.1:${port}`;
    for (let attempt = 0; ; attempt++) {
      if (child.exitCode !== null) throw new Error(`the gateway under valgrind stopped:\n${output}`);
      if (await fetch(`${origin}/healthz`).then((response) => response.ok, () => false)) break;
      if (attempt > 600) throw new Error(`the gateway under valgrind did not answer in 5 minutes:\n${output}`);
      await sleep(500);
    }
    const headers = await benchKeyHeaders(origin, dataDir, simulator, { ...EVERYTHING_ON, requestLog });
    // The calls run without a pause from the warm-up to the end: an idle gateway lets V8 age its compiled code and collect
    // at leisure, which the next calls would pay for. The counters are zeroed just after a batch was committed (the log's,
    // or the ledger's when the log is off), seen as the table growing, so no batch straddles the start; at the end SIGTERM
    // makes the gateway write what is queued at once and exit, and callgrind's dump at the exit is read.
    let completed = 0;
    let measured = -1;
    let failure: Error | undefined;
    const calls = Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (failure === undefined && (measured < 0 || measured < options.requests)) {
          const response = await fetch(`${origin}${CHAT_PATH}`, { method: 'POST', headers, body: CHAT_BODY });
          await response.arrayBuffer();
          if (!response.ok) failure = new Error(`a chat call answered ${response.status}`);
          completed++;
          if (measured >= 0) measured++;
        }
      }),
    );
    const database = new SqliteDatabase(join(dataDir, 'tollgate.db'), { readonly: true, fileMustExist: true });
    try {
      const rows = database.prepare(`select count(*) as n from ${requestLog ? 'request_log' : 'ledger'}`).pluck();
      let before = rows.get() as number;
      for (;;) {
        await sleep(50);
        if (failure) throw failure;
        const now = rows.get() as number;
        if (now !== before && completed >= options.warmUp) break;
        before = now;
      }
    } finally {
      database.close();
    }
    control(['--zero']);
    measured = 0;
    await calls;
    if (failure) throw failure;
  } finally {
    child.kill('SIGTERM');
    await exited;
    rmSync(dataDir, { recursive: true, force: true });
  }
  let main = 0;
  let all = 0;
  let mainDump: string | undefined;
  for (const name of readdirSync(directory)) {
    const text = readFileSync(join(directory, name), 'utf8');
    if (!text.includes('\ndesc: Trigger: Program termination')) continue;
    const summary = Number(/^summary: (\d+)$/m.exec(text)?.[1] ?? 0);
    all += summary;
    if (/^thread: 1$/m.test(text)) {
      main += summary;
      mainDump = join(directory, name);
    }
  }
  return { variant, main: main / options.requests, all: all / options.requests, mainDump, directory };
}

/** The frames every count passes through (the process's and the threads' entry points, the event loop). */
const ROOTS = ['(below main)', ':main [', 'libc_start', 'clone.S', 'start_thread', 'SpinEventLoop', 'NodeMainInstance', 'node::Start(', 'ld-linux'];

/** Instructions per call of each native function in a dump, its own (callgrind_annotate's listing). */
function functionCounts(dump: string, calls: number): Map<string, number> {
  const listing = execFileSync('callgrind_annotate', ['--threshold=100', '--inclusive=no', dump], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const counts = new Map<string, number>();
  for (const line of listing.split('\n')) {
    const match = /^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.+)$/.exec(line);
    if (!match || match[2]!.includes('PROGRAM TOTALS')) continue;
    // JIT-compiled code has no name (an address that differs between runs, and callgrind cannot walk its frames, so
    // its lines are not one function's own cost); the entry points above everything carry the whole count: both left out.
    if (match[2]!.startsWith('???:0x') || ROOTS.some((root) => match[2]!.includes(root))) continue;
    const name = match[2]!.replace(/ \[[^\]]*\/([^/\]]+)\]$/, ' [$1]');
    counts.set(name, (counts.get(name) ?? 0) + Number(match[1]!.replaceAll(',', '')) / calls);
  }
  return counts;
}

const thousands = (value: number): string => `${(value / 1000).toFixed(1)}k`;

async function run(options: Options): Promise<void> {
  execFileSync('valgrind', ['--version'], { stdio: 'ignore' });
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const against = options.against === undefined ? undefined : bundleRevision(ROOT, options.against);
  // "a" and "b" of each pair: the log on and off in the working tree's build, or the working tree against another revision.
  const [a, b]: [Variant, Variant] = against
    ? [{ label: 'working tree', bundle: 'dist/main.js', requestLog: true }, { label: `${options.against} (${against.commit.slice(0, 12)})`, bundle: against.bundle, requestLog: true }]
    : [{ label: 'log on', bundle: 'dist/main.js', requestLog: true }, { label: 'log off', bundle: 'dist/main.js', requestLog: false }];
  const difference = against ? 'difference' : "the log's share";
  const simulator = await startSimulator(ROOT, 20);
  await simulator.configure({ latencyMs: 0, chunkDelayMs: 0 });
  console.error(`counting: ${options.warmUp} calls of warm-up, then ${options.requests} (non-stream chat, ${CONNECTIONS} connections), ${a.label} and ${b.label} side by side`);
  const share = (x: number, y: number): number => ((x - y) / y) * 100;
  const percent = (value: number): string => `${value.toFixed(1)} %`;
  const pairs: Array<{ on: Count; off: Count }> = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      const basePort = 20_000 + Math.floor(Math.random() * 20_000);
      const [on, off] = await Promise.all([countInstructions(simulator, a, options, basePort), countInstructions(simulator, b, options, basePort + 1)]);
      pairs.push({ on, off });
    }
  } finally {
    if (against) removeBundle(ROOT, against.bundle);
  }
  console.log(`\n| instructions per chat call | ${a.label} | ${b.label} | ${difference} |\n|---|---:|---:|---:|`);
  for (const [index, { on, off }] of pairs.entries()) {
    const round = pairs.length > 1 ? ` (round ${index + 1})` : '';
    console.log(`| main thread${round} | ${thousands(on.main)} | ${thousands(off.main)} | ${percent(share(on.main, off.main))} |`);
    console.log(`| all threads${round} | ${thousands(on.all)} | ${thousands(off.all)} | ${percent(share(on.all, off.all))} |`);
  }
  if (pairs.length > 1) {
    const shares = pairs.map(({ on, off }) => share(on.main, off.main)).sort((x, y) => x - y);
    console.log(`\nmain thread, ${difference} over ${pairs.length} fresh pairs: median ${percent(median(shares))} (${shares.map(percent).join(', ')})`);
  }
  const last = pairs.at(-1)!;
  if (options.top > 0 && last.on.mainDump && last.off.mainDump) {
    const countsA = functionCounts(last.on.mainDump, options.requests);
    const countsB = functionCounts(last.off.mainDump, options.requests);
    const names = [...new Set([...countsA.keys(), ...countsB.keys()])];
    const rows = names.map((name) => ({ name, on: countsA.get(name) ?? 0, off: countsB.get(name) ?? 0 })).sort((x, y) => Math.abs(y.on - y.off) - Math.abs(x.on - x.off));
    console.log(`\n| main thread, native functions' own instructions${pairs.length > 1 ? ' (last round)' : ''} | ${a.label} | ${b.label} | difference |\n|---|---:|---:|---:|`);
    for (const row of rows.slice(0, options.top)) console.log(`| ${row.name.slice(0, 110)} | ${Math.round(row.on)} | ${Math.round(row.off)} | ${Math.round(row.on - row.off)} |`);
  }
  for (const { on, off } of pairs) for (const count of [on, off]) rmSync(count.directory, { recursive: true, force: true });
}

installExitHandlers();
try {
  await run(parseArguments(process.argv.slice(2)));
} finally {
  await stopEverything();
}
