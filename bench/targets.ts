// The processes under test and how to address them: the simulator (the upstream, and the "direct" target), Tollgate with a
// funded key, and the Portkey gateway pointed at the same simulator. Only 127.0.0.1 is ever addressed.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childEnvironment, freePort, removeOnExit, startChild, waitUntilAnswering, type Child } from './child-processes.ts';

export const CHAT_PATH = '/v1/chat/completions';
export const CHAT_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello in five words.' }] });
/**
 * A chat request as a conversation of some length sends it: 50 turns, ~54 KB, quotes, backslashes and non-ASCII text in
 * them. Every byte of it is read, checked, parsed, validated and sent on: what a gateway costs per byte of body shows here.
 */
export const LONG_CHAT_BODY = JSON.stringify({
  model: 'gpt-4o-mini',
  messages: Array.from({ length: 50 }, (_, turn) => ({
    role: turn % 2 === 0 ? 'user' : 'assistant',
    content: `Turn ${turn}: ${'Some text with "quotes", a \\ backslash and a café. '.repeat(20)}`,
  })),
});
export const STREAM_BODY = JSON.stringify({ model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'Say hello in five words.' }] });
export const MESSAGES_PATH = '/v1/messages';
export const MESSAGES_BODY = JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello in five words.' }] });
export const MESSAGES_STREAM_BODY = JSON.stringify({ model: 'claude-sonnet-4-6', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello in five words.' }] });

/** A request the bench sends: the path and the body. */
export interface BenchRequest {
  path: string;
  body: string;
}

const longer = (body: string): string => JSON.stringify({ ...(JSON.parse(body) as object), messages: (JSON.parse(LONG_CHAT_BODY) as { messages: unknown }).messages });

/** The requests bench:profile and bench:compare can send (`--scenario`); the `-long` ones carry LONG_CHAT_BODY's 50 turns. */
export const SCENARIOS = {
  chat: { path: CHAT_PATH, body: CHAT_BODY },
  'chat-long': { path: CHAT_PATH, body: LONG_CHAT_BODY },
  'chat-stream': { path: CHAT_PATH, body: STREAM_BODY },
  'chat-stream-long': { path: CHAT_PATH, body: longer(STREAM_BODY) },
  messages: { path: MESSAGES_PATH, body: MESSAGES_BODY },
  'messages-long': { path: MESSAGES_PATH, body: longer(MESSAGES_BODY) },
  'messages-stream': { path: MESSAGES_PATH, body: MESSAGES_STREAM_BODY },
  'messages-stream-long': { path: MESSAGES_PATH, body: longer(MESSAGES_STREAM_BODY) },
} as const satisfies Record<string, BenchRequest>;
export type Scenario = keyof typeof SCENARIOS;

/** Something requests are sent to, and the process whose CPU and memory count for it. */
export interface Target {
  /** `tollgate` with every feature on; `tollgate (… off)` otherwise. */
  name: 'direct' | 'bare-proxy' | 'portkey' | `tollgate${string}`;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Headers of every chat request (authorization, content type, routing). */
  headers: Record<string, string>;
  /** The process measured for CPU and RSS (for "direct", the simulator). */
  pid: number;
  /** Stops the process behind the target; a no-op for the simulator, which outlives every target. */
  stop(): Promise<void>;
}

export interface SimulatorControl {
  origin: string;
  child: Child;
  /** POST /_sim/config with a partial options object (latencyMs, chunkDelayMs, streamChunks, …). */
  configure(options: Record<string, number>): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

async function sendJson(method: 'POST' | 'PUT', url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const response = await fetch(url, { method, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text}`);
  return JSON.parse(text) as unknown;
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}): Promise<unknown> => sendJson('POST', url, body, headers);

function stringField(value: unknown, field: string): string {
  const found = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[field] : undefined;
  if (typeof found !== 'string') throw new Error(`expected a string "${field}" in ${JSON.stringify(value)}`);
  return found;
}

export async function startSimulator(root: string, streamChunks: number): Promise<SimulatorControl> {
  const port = await freePort();
  const environment = childEnvironment({ SIM_HOST: '127.0.0.1', SIM_PORT: String(port), SIM_LATENCY_MS: '0', SIM_CHUNK_DELAY_MS: '0', SIM_STREAM_CHUNKS: String(streamChunks) });
  const child = startChild('simulator', ['--import', 'tsx', 'simulator/main.ts'], environment, root);
  const origin = `http://127.0.0.1:${port}`;
  await waitUntilAnswering(child, `${origin}/_sim/health`);
  return {
    origin,
    child,
    async configure(options) {
      await postJson(`${origin}/_sim/config`, options);
    },
  };
}

export function directTarget(simulator: SimulatorControl): Target {
  return { name: 'direct', origin: simulator.origin, headers: { ...JSON_HEADERS, authorization: 'Bearer bench' }, pid: simulator.child.pid, stop: async () => {} };
}

/**
 * What of the gateway's own per-request work a bench gateway runs (issue 16: measured with everything a user switches on).
 * The bench's figures come from `EVERYTHING_ON`; a feature is off only to measure what it costs.
 */
export interface GatewayFeatures {
  /** The request log (TOLLGATE_REQUEST_LOG). */
  requestLog: boolean;
  /**
   * The key's own limits, none of them reached — requests and tokens per minute, a monthly spend limit, allowed models and
   * an expiry date — and each vendor reached through two channels weighted 3:1 (both the simulator).
   */
  limitsAndChannels: boolean;
}

export const EVERYTHING_ON: GatewayFeatures = { requestLog: true, limitsAndChannels: true };

function gatewayName(features: GatewayFeatures): Target['name'] {
  const off = [...(features.requestLog ? [] : ['request log']), ...(features.limitsAndChannels ? [] : ['limits and channels'])];
  return off.length === 0 ? 'tollgate' : `tollgate (${off.join(', ')} off)`;
}

/** The most the admin API takes for a key's requests per minute: above anything a bench run sends in a minute. */
const BENCH_REQUESTS_PER_MINUTE = 1_000_000;

/**
 * Request headers with the key of a user made through the admin API, with a balance no run can exhaust; with
 * `limitsAndChannels`, the key carries every limit (none reached) and each vendor gets its two channels.
 */
export async function benchKeyHeaders(origin: string, dataDir: string, simulator: SimulatorControl, features: GatewayFeatures): Promise<Record<string, string>> {
  const admin = { authorization: `Bearer ${readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()}` };
  if (features.limitsAndChannels) {
    const channels = (baseUrl: string) => [
      { id: 'primary', baseUrl, apiKey: 'bench', weight: 3 },
      { id: 'secondary', baseUrl, apiKey: 'bench', weight: 1 },
    ];
    await sendJson('PUT', `${origin}/admin/v1/providers/openai`, { type: 'openai', channels: channels(`${simulator.origin}/v1`) }, admin);
    await sendJson('PUT', `${origin}/admin/v1/providers/anthropic`, { type: 'anthropic', channels: channels(simulator.origin) }, admin);
  }
  const user = await postJson(`${origin}/admin/v1/users`, { name: 'bench', balance: '1000000' }, admin);
  const limits = features.limitsAndChannels
    ? {
        rateLimit: BENCH_REQUESTS_PER_MINUTE,
        tpm: 1_000_000_000,
        limit: { amount: '1000000', period: 'month' },
        allowedModels: [JSON.parse(CHAT_BODY).model as string, JSON.parse(MESSAGES_BODY).model as string],
        expiresAt: '2100-01-01T00:00:00Z',
      }
    : {};
  const key = await postJson(`${origin}/admin/v1/keys`, { userId: stringField(user, 'id'), name: 'bench', ...limits }, admin);
  return { ...JSON_HEADERS, authorization: `Bearer ${stringField(key, 'key')}` };
}

/** The gateway's settings in every bench: its port and data folder, both vendors pointed at the simulator, quiet logs. */
export function tollgateVariables(port: number, dataDir: string, simulator: SimulatorControl, requestLog: boolean): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    OPENAI_API_KEY: 'bench',
    OPENAI_BASE_URL: `${simulator.origin}/v1`,
    ANTHROPIC_API_KEY: 'bench',
    ANTHROPIC_BASE_URL: simulator.origin,
    TOLLGATE_LOG_LEVEL: 'warn',
    TOLLGATE_REQUEST_LOG: requestLog ? 'on' : 'off',
  };
}

/**
 * How `npm start` runs node (package.json's start script): its flags before `dist/main.js` and its environment settings
 * (MALLOC_ARENA_MAX). Every bench tool starts the gateway with exactly these, so what it measures is what `npm start` serves.
 */
export function npmStartNode(root: string): { flags: string[]; environment: Record<string, string> } {
  const start = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start ?? '';
  const node = /\bnode ((?:--\S+ )*)dist\/main\.js/.exec(start);
  if (!node) throw new Error(`package.json's start script does not run node on dist/main.js: ${start}`);
  const environment: Record<string, string> = {};
  for (const [, name, value] of start.matchAll(/\b([A-Z][A-Z0-9_]+)=(\S+)/g)) environment[name!] = value!;
  return { flags: node[1]!.trim().split(' ').filter(Boolean), environment };
}

/** How a bench gateway is launched beyond its features: extra node flags, another bundle, extra settings. */
export interface GatewayLaunch {
  /** Extra node flags, after npm start's own so that they win (bench/profile.ts: --cpu-prof). */
  nodeFlags?: readonly string[];
  /** A bundle other than the working tree's `dist/main.js`, relative to the root (bench/compare-builds.ts: another revision's build). */
  bundle?: string;
  /** Settings added to the bench's own (TOLLGATE_*), e.g. a batch window. */
  environment?: Record<string, string>;
  /** Where the gateway's fresh data folder is made (default: the system's temporary folder), e.g. a tmpfs to take the disk out. */
  dataParent?: string;
}

/**
 * Tollgate on the embedded default (SQLite in a fresh data folder), both vendors pointed at the external simulator. The
 * benchmark's key belongs to a user created through the admin API with a balance no run can exhaust (`benchKeyHeaders`).
 */
export async function startTollgate(
  root: string,
  simulator: SimulatorControl,
  stopChild: (child: Child) => Promise<void>,
  features: GatewayFeatures = EVERYTHING_ON,
  launch: GatewayLaunch = {},
): Promise<Target> {
  const dataDir = mkdtempSync(join(launch.dataParent ?? tmpdir(), 'tollgate-bench-'));
  const cleanup = removeOnExit(dataDir);
  const port = await freePort();
  const environment = childEnvironment({ ...tollgateVariables(port, dataDir, simulator, features.requestLog), ...launch.environment });
  // Measured as `npm start` serves: the bundled build (no TypeScript loader in the process).
  if (launch.bundle === undefined) execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  // The same node flags and allocator setting as `npm start` (package.json).
  const asStarted = npmStartNode(root);
  const child = startChild('tollgate', [...asStarted.flags, ...(launch.nodeFlags ?? []), launch.bundle ?? 'dist/main.js'], { ...environment, ...asStarted.environment }, root);
  const origin = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
    cleanup.forget();
  };
  try {
    await waitUntilAnswering(child, `${origin}/healthz`);
    const headers = await benchKeyHeaders(origin, dataDir, simulator, features);
    return { name: gatewayName(features), origin, headers, pid: child.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Portkey's open-source gateway, headless, routed to the simulator per request by its provider and custom-host headers. */
export async function startPortkey(root: string, simulator: SimulatorControl, stopChild: (child: Child) => Promise<void>): Promise<Target> {
  const port = await freePort();
  const script = join('node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  const child = startChild('portkey', [script, `--port=${port}`, '--headless'], childEnvironment({}), root);
  const origin = `http://127.0.0.1:${port}`;
  const stop = (): Promise<void> => stopChild(child);
  try {
    await waitUntilAnswering(child, `${origin}/`);
  } catch (error) {
    await stop();
    throw error;
  }
  const headers = {
    ...JSON_HEADERS,
    authorization: 'Bearer x',
    'x-portkey-provider': 'openai',
    'x-portkey-custom-host': `${simulator.origin}/v1`,
  };
  return { name: 'portkey', origin, headers, pid: child.pid, stop };
}
