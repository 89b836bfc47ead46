#!/usr/bin/env node
// Builds the web app (web/ → web/dist) when the build is missing or older than its sources, so `npm start`, `npm test`
// and the console's browser tests never run against a stale build; an up-to-date build costs one directory walk.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WEB = dirname(fileURLToPath(import.meta.url));
const ROOT = dirname(WEB);

function newestInput(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestInput(join(path, name))), stat.mtimeMs);
}

/** True when web/dist/index.html exists and is newer than every source of the app (and the lockfile). */
export function webBuildIsFresh() {
  const built = join(WEB, 'dist', 'index.html');
  if (!existsSync(built)) return false;
  const inputs = [join(WEB, 'src'), join(WEB, 'index.html'), join(WEB, 'vite.config.ts'), join(ROOT, 'package-lock.json')].filter((path) => existsSync(path));
  return statSync(built).mtimeMs >= Math.max(...inputs.map(newestInput));
}

const LOCK = join(WEB, '.build-lock');

/** Test files start in parallel: one builds while the others wait, then find the build fresh (a stale lock expires). */
function withLock(work) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 120_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waiting for another web build (${LOCK}) timed out`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    return work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Builds web/dist unless it is fresh (or `force`). Returns what it did. */
export function buildWeb({ force = false } = {}) {
  if (!force && webBuildIsFresh()) return 'fresh';
  return withLock(() => (!force && webBuildIsFresh() ? 'fresh' : runVite()));
}

function runVite() {
  let vite;
  try {
    vite = join(dirname(createRequire(import.meta.url).resolve('vite/package.json')), 'bin', 'vite.js');
  } catch {
    // `npm ci --omit=dev` installs no vite: the gateway still runs, its web pages answer 503 until the app is built.
    process.stderr.write('web console not built: vite is not installed (devDependencies omitted)\n');
    return 'skipped';
  }
  const result = spawnSync(process.execPath, [vite, 'build', '--config', join(WEB, 'vite.config.ts'), '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`building the web console failed (vite exited with ${result.status})`);
  return 'built';
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    buildWeb({ force: process.argv.includes('--force') });
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
