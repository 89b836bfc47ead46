// Runs the simulator as a process: `npm run simulator`. Environment: SIM_HOST, SIM_PORT (default 9090),
// SIM_LATENCY_MS, SIM_CHUNK_DELAY_MS, SIM_STREAM_CHUNKS, SIM_REPLY_TOKENS, SIM_VIDEO_POLLS.

import { startSimulator, type SimulatorOptions } from './server.ts';

function numberFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

const options: SimulatorOptions = {
  host: process.env.SIM_HOST || '127.0.0.1',
  port: numberFromEnv('SIM_PORT') ?? 9090,
  latencyMs: numberFromEnv('SIM_LATENCY_MS'),
  chunkDelayMs: numberFromEnv('SIM_CHUNK_DELAY_MS'),
  streamChunks: numberFromEnv('SIM_STREAM_CHUNKS'),
  replyTokens: numberFromEnv('SIM_REPLY_TOKENS'),
  videoPollsToComplete: numberFromEnv('SIM_VIDEO_POLLS'),
};

const simulator = await startSimulator(options);
console.log(`simulator listening on ${simulator.url}`);

let closing = false;
function shutdown(): void {
  if (closing) return;
  closing = true;
  simulator.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
