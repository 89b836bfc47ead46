// `npm run bench:compare [-- --against REV] [-- --rounds N] [-- --seconds S] [-- --set NAME=VALUE] [-- --set-against NAME=VALUE]
// [-- --node-flag FLAG] [-- --data-in DIR] [-- --scenario NAME]` (issue 16): is a change to the gateway faster or slower? The working tree's build
// against another revision's (HEAD by default), with everything a user switches on, at the table's 50 connections. The method
// is the feature cost's (bench/feature-cost.ts): each round starts the two gateways fresh, in alternating order, loads each
// at saturation in alternating order, and the median of the rounds' differences is reported with their spread, so the shared
// machine's drift falls on both sides. `--set` adds a setting (a batch window, a feature switch) and `--node-flag` a node
// flag (a V8 option) to the working tree's gateway only, and `--data-in` makes its data folder elsewhere (a tmpfs: what the
// disk costs), so one build can also be compared with itself under two settings; a clean tree against HEAD is an A/A run,
// which shows the noise. The other revision is checked out in a temporary git worktree and bundled with the working tree's
// esbuild, into dist/ beside the working tree's bundle so that both resolve the same node_modules. `--scenario` sends one of
// targets.ts's SCENARIOS instead of the short chat request (a long Messages conversation, a long stream).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installExitHandlers, stopChild, stopEverything } from './child-processes.ts';
import { measureFeatureCost } from './feature-cost.ts';
import { EVERYTHING_ON, SCENARIOS, startSimulator, startTollgate, type Scenario } from './targets.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const CONNECTIONS = 50;
const USAGE = 'usage: npm run bench:compare [-- --against REV] [-- --rounds N] [-- --seconds S] [-- --set NAME=VALUE] [-- --set-against NAME=VALUE] [-- --node-flag FLAG] [-- --data-in DIR] [-- --scenario NAME]';

interface Options {
  against: string;
  rounds: number;
  seconds: number;
  set: Record<string, string>;
  setAgainst: Record<string, string>;
  nodeFlags: string[];
  dataIn: string | undefined;
  scenario: Scenario;
}

function parseArguments(argv: readonly string[]): Options {
  const options: Options = { against: 'HEAD', rounds: 8, seconds: 3, set: {}, setAgainst: {}, nodeFlags: [], dataIn: undefined, scenario: 'chat' };
  const setting = (text: string | undefined, into: Record<string, string>): void => {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(text ?? '');
    if (!match) throw new Error(`a setting is NAME=VALUE, got "${text ?? ''}"\n${USAGE}`);
    into[match[1]!] = match[2]!;
  };
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    const value = (): string | undefined => argv[++index];
    if (argument === '--') continue;
    if (argument === '--against') options.against = value() ?? '';
    else if (argument === '--rounds') options.rounds = Number(value());
    else if (argument === '--seconds') options.seconds = Number(value());
    else if (argument === '--set') setting(value(), options.set);
    else if (argument === '--set-against') setting(value(), options.setAgainst);
    else if (argument === '--data-in') options.dataIn = value();
    else if (argument === '--scenario') {
      const name = value() ?? '';
      if (!(name in SCENARIOS)) throw new Error(`--scenario takes one of ${Object.keys(SCENARIOS).join(', ')}, got "${name}"\n${USAGE}`);
      options.scenario = name as Scenario;
    }
    else if (argument === '--node-flag') {
      const flag = value() ?? '';
      if (!flag.startsWith('--')) throw new Error(`--node-flag takes a flag such as --maglev, got "${flag}"\n${USAGE}`);
      options.nodeFlags.push(flag);
    }
    else throw new Error(`unknown argument "${argument ?? ''}"\n${USAGE}`);
  }
  if (!Number.isInteger(options.rounds) || options.rounds < 2) throw new Error(`--rounds takes a whole number ≥ 2\n${USAGE}`);
  if (!(options.seconds > 0)) throw new Error(`--seconds takes a positive number\n${USAGE}`);
  return options;
}

/**
 * Bundles revision `rev` as `npm run build` bundles the working tree, into dist/ beside it; returns the bundle's path relative
 * to the root (bench/instructions.ts uses it too). `removeBundle` deletes it again.
 */
export function bundleRevision(root: string, rev: string): { bundle: string; commit: string } {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${rev}^{commit}`], { cwd: root, encoding: 'utf8' }).trim();
  const checkout = mkdtempSync(join(tmpdir(), 'tollgate-against-'));
  const bundle = `dist/against-${commit.slice(0, 12)}.js`;
  try {
    execFileSync('git', ['worktree', 'add', '--detach', '--force', checkout, commit], { cwd: root, stdio: 'ignore' });
    // An esbuild call, then (since the twenty-third session) node scripts of the revision's own, such as the map's thinning.
    const [esbuild, ...after] = (JSON.parse(execFileSync('npm', ['pkg', 'get', 'scripts.build'], { cwd: checkout, encoding: 'utf8' })) as string).split(' && ').map((step) => step.split(' '));
    if (esbuild?.[0] !== 'esbuild') throw new Error(`${rev}'s build script does not start with an esbuild call: ${esbuild?.join(' ')}`);
    const args = esbuild.slice(1).map((part) => (part === 'src/main.ts' ? join(checkout, 'src/main.ts') : part.startsWith('--outfile=') ? `--outfile=${bundle}` : part));
    execFileSync(join(root, 'node_modules', '.bin', 'esbuild'), args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    for (const [command, script, ...rest] of after) {
      if (command !== 'node' || !script) throw new Error(`${rev}'s build script has a step that is not a node script: ${command}`);
      execFileSync(process.execPath, [join(checkout, script), ...rest.map((part) => part.replace('dist/main.js', bundle))], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    }
  } finally {
    execFileSync('git', ['worktree', 'remove', '--force', checkout], { cwd: root, stdio: 'ignore' });
    rmSync(checkout, { recursive: true, force: true });
  }
  return { bundle, commit };
}

export function removeBundle(root: string, bundle: string): void {
  rmSync(join(root, bundle), { force: true });
  rmSync(join(root, `${bundle}.map`), { force: true });
}

const signed = (value: number): string => `${value >= 0 ? '+' : ''}${value.toFixed(1)} %`;

async function run(options: Options): Promise<void> {
  const against = bundleRevision(ROOT, options.against);
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src'], { cwd: ROOT, encoding: 'utf8' }).trim() !== '';
  const simulator = await startSimulator(ROOT, 20);
  try {
    // "on" is the working tree, "off" the other revision: measureFeatureCost's loss is then how much slower the working tree is.
    const cost = await measureFeatureCost(
      (workingTree) =>
        startTollgate(ROOT, simulator, stopChild, EVERYTHING_ON, workingTree ? { bundle: 'dist/main.js', environment: options.set, nodeFlags: options.nodeFlags, ...(options.dataIn ? { dataParent: options.dataIn } : {}) } : { bundle: against.bundle, environment: options.setAgainst }),
      simulator,
      CONNECTIONS,
      options.seconds,
      options.rounds,
      SCENARIOS[options.scenario],
    );
    const settings = (set: Record<string, string>): string => Object.entries(set).map(([name, value]) => ` ${name}=${value}`).join('');
    console.log(`\nworking tree${dirty ? ' (with uncommitted changes to src/)' : ''}${settings(options.set)}${options.nodeFlags.map((flag) => ` ${flag}`).join('')}${options.dataIn ? ` (data in ${options.dataIn})` : ''} against ${options.against} (${against.commit.slice(0, 12)})${settings(options.setAgainst)}:`);
    console.log(`${cost.rounds} rounds of ${cost.secondsPerRun} s at ${CONNECTIONS} connections, fresh gateways each round, everything on, scenario ${options.scenario}\n`);
    console.log('| | working tree | against | difference (median of pairs) |\n|---|---:|---:|---:|');
    console.log(`| req/s | ${cost.on.requestsPerSecond.toFixed(0)} | ${cost.off.requestsPerSecond.toFixed(0)} | ${signed(-cost.lossPercent)} |`);
    console.log(`| CPU a call (µs) | ${cost.on.cpuMicrosecondsPerRequest.toFixed(1)} | ${cost.off.cpuMicrosecondsPerRequest.toFixed(1)} | ${signed(cost.cpuPercent)} |`);
    console.log(`\nreq/s, each pair's difference: ${cost.pairLosses.map((loss) => signed(-loss)).reverse().join(', ')}`);
  } finally {
    removeBundle(ROOT, against.bundle);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  installExitHandlers();
  try {
    await run(parseArguments(process.argv.slice(2)));
  } finally {
    await stopEverything();
  }
}
