// `npm run bench:soak [-- --requests N] [-- --stream-every K]` (issue 16): sends N requests (default 1,000,000) through the
// gateway at full speed — non-stream chat, with every K-th a stream (default 10) — and reports its resident memory at the
// start, after each tenth of the run, and 30 s after the load, so growth across a million requests shows (a leak grows
// steadily; a healthy process levels off). Each request does its real billing work (ledger, request log).

import { setTimeout as sleep } from 'node:timers/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { installExitHandlers, stopChild, stopEverything } from './child-processes.ts';
import { cpuMicroseconds, residentBytes } from './process-stats.ts';
import { CHAT_BODY, CHAT_PATH, STREAM_BODY, startSimulator, startTollgate } from './targets.ts';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const MB = 1024 * 1024;

function parseArguments(argv: readonly string[]): { requests: number; streamEvery: number } {
  let requests = 1_000_000;
  let streamEvery = 10;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index];
    if (argument === '--') continue;
    if (argument === '--requests') requests = Number(argv[++index]);
    else if (argument === '--stream-every') streamEvery = Number(argv[++index]);
    else throw new Error(`unknown argument "${argument ?? ''}" (--requests N, --stream-every K)`);
  }
  if (!Number.isInteger(requests) || requests < 10 || !Number.isInteger(streamEvery) || streamEvery < 1) throw new Error('--requests ≥ 10 and --stream-every ≥ 1, integers');
  return { requests, streamEvery };
}

installExitHandlers();
try {
  const { requests, streamEvery } = parseArguments(process.argv.slice(2));
  const simulator = await startSimulator(ROOT, 20);
  const target = await startTollgate(ROOT, simulator, stopChild);
  await sleep(500);
  const rows: string[] = [`| after | requests | RSS (MB) | req/s in this tenth | CPU µs per request |`, '|---|---:|---:|---:|---:|'];
  rows.push(`| start | 0 | ${(residentBytes(target.pid) / MB).toFixed(1)} | — | — |`);
  const tenth = Math.ceil(requests / 10);
  let sent = 0;
  let failed = 0;
  const startedAt = Date.now();
  for (let part = 1; sent < requests; part++) {
    const amount = Math.min(tenth, requests - sent);
    const cpuBefore = cpuMicroseconds(target.pid);
    const partStart = Date.now();
    let index = 0;
    const result = await autocannon({
      url: `${target.origin}${CHAT_PATH}`,
      method: 'POST',
      headers: target.headers,
      connections: 50,
      amount,
      timeout: 10,
      // Every K-th request streams, so stream state is exercised for leaks too.
      requests: [{ setupRequest: (request) => ({ ...request, body: ++index % streamEvery === 0 ? STREAM_BODY : CHAT_BODY }) }],
    });
    sent += result.requests.total;
    failed += result.non2xx + result.errors + result.timeouts;
    const seconds = (Date.now() - partStart) / 1000;
    const cpuPerRequest = (cpuMicroseconds(target.pid) - cpuBefore) / Math.max(result.requests.total, 1);
    rows.push(`| ${part}/10 | ${sent.toLocaleString('en')} | ${(residentBytes(target.pid) / MB).toFixed(1)} | ${(result.requests.total / seconds).toFixed(0)} | ${cpuPerRequest.toFixed(0)} |`);
    console.error(rows.at(-1));
  }
  await sleep(30_000);
  rows.push(`| 30 s after the load | ${sent.toLocaleString('en')} | ${(residentBytes(target.pid) / MB).toFixed(1)} | — | — |`);
  console.log(`\nsoak: ${sent.toLocaleString('en')} requests (every ${streamEvery}th streamed) in ${((Date.now() - startedAt) / 1000).toFixed(0)} s, ${failed} failed\n`);
  console.log(rows.join('\n'));
  await target.stop();
} finally {
  await stopEverything();
}
