import assert from 'node:assert/strict';
import { micros, type TestGateway } from './gateway.ts';
import { asArray, asRecord, ledger, postRaw, readRaw, type JsonRecord, type LedgerRow, type RawResponse } from './e2e.ts';

/** Shared pieces of the task suites: raw GETs, driving the job runner with the clock, shapes of SPEC 2.7/2.9/2.10 C. */

export async function getRaw(gateway: TestGateway, path: string, key?: string): Promise<RawResponse> {
  const response = await fetch(`${gateway.url}${path}`, { headers: key === undefined ? {} : { authorization: `Bearer ${key}` } });
  return readRaw(response);
}

/** POST a JSON body and expect 200; returns the parsed object. */
export async function postOk(gateway: TestGateway, path: string, key: string, body: JsonRecord): Promise<{ body: JsonRecord; headers: Headers }> {
  const response = await postRaw(gateway, path, { key, body });
  assert.equal(response.status, 200, `POST ${path}: ${response.text}`);
  return { body: asRecord(response.json, `POST ${path} body`), headers: response.headers };
}

/** GET and expect 200; returns the parsed object. */
export async function getOk(gateway: TestGateway, path: string, key: string): Promise<JsonRecord> {
  const response = await getRaw(gateway, path, key);
  assert.equal(response.status, 200, `GET ${path}: ${response.text}`);
  return asRecord(response.json, `GET ${path} body`);
}

/** Moves the injected clock, then runs every job due; resolves with how many ran. */
export async function advanceAndRun(gateway: TestGateway, ms: number): Promise<number> {
  gateway.clock.advance(ms);
  return gateway.app.services.runner.runDue();
}

/** Shape C of SPEC 2.10, narrowed. */
export function errorC(body: unknown): { code: number; message: string; original_id: string } {
  const error = asRecord(body, 'shape C body');
  const { code, message, original_id: originalId } = error;
  if (typeof code !== 'number' || typeof message !== 'string' || typeof originalId !== 'string') throw new Error(`not a shape C error: ${JSON.stringify(body)}`);
  return { code, message, original_id: originalId };
}

/** Checks SPEC 2.9's fields (and `created_at` as Unix seconds of the injected clock when given); returns the result URLs. */
export function mediaTaskUrls(body: unknown, expected: { id?: string; model?: string; status?: string; createdAtMs?: number }): string[] {
  const task = asRecord(body, 'media task');
  assert.equal(task.code, 0);
  assert.equal(typeof task.id, 'string');
  if (expected.id !== undefined) assert.equal(task.id, expected.id);
  if (expected.model !== undefined) assert.equal(task.model, expected.model);
  if (expected.status !== undefined) assert.equal(task.status, expected.status, JSON.stringify(task));
  assert.ok(Number.isInteger(task.created_at), `created_at is an integer: ${String(task.created_at)}`);
  if (expected.createdAtMs !== undefined) assert.equal(task.created_at, Math.floor(expected.createdAtMs / 1000));
  return asArray(task.result, 'result').map((entry) => {
    const url = asRecord(entry, 'result entry').url;
    assert.equal(typeof url, 'string');
    return url as string;
  });
}

/** Downloads a result file; the URL must be the gateway's own (DESIGN §5). */
export async function download(gateway: TestGateway, url: string): Promise<{ contentType: string; data: Buffer }> {
  assert.ok(url.startsWith(`${gateway.url}/`), `${url} is served by the gateway (${gateway.url})`);
  const response = await fetch(url);
  assert.equal(response.status, 200, `download ${url}`);
  return { contentType: response.headers.get('content-type') ?? '', data: Buffer.from(await response.arrayBuffer()) };
}

/** Vendor requests the simulator received on a path. */
export const vendorCalls = (gateway: TestGateway, path: string): number => gateway.simulator.requests.filter((request) => request.path === path).length;

/** A user's ledger entries other than credits (top-ups). */
export async function movements(gateway: TestGateway, userId: string): Promise<LedgerRow[]> {
  return (await ledger(gateway, { userId })).filter((row) => row.kind !== 'credit');
}

/**
 * `[kind, micro-units, model]` of a user's charges and refunds, in a fixed order (entries booked in the same millisecond
 * of the injected clock have no defined order in the ledger).
 */
export async function movementSummary(gateway: TestGateway, userId: string): Promise<Array<[string, bigint, string | null]>> {
  return (await movements(gateway, userId))
    .map((row): [string, bigint, string | null] => [row.kind, micros(row.amount), row.model])
    .sort((a, b) => a[0].localeCompare(b[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
}

/**
 * A PCM WAV file (8 kHz, 16-bit mono: 16,000 bytes a second) of `seconds` seconds, header included, whose total size is
 * exactly `16000 × seconds` bytes: its header says a hair under `seconds` (rounded up: `seconds`), and the simulator,
 * which reports `ceil(bytes / 16000)`, reports `seconds` too.
 */
export function wavOfSeconds(seconds: number): Buffer {
  const byteRate = 16_000;
  const dataBytes = byteRate * seconds - 44;
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8_000, 24);
  header.writeUInt32LE(byteRate, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  const samples = Buffer.alloc(dataBytes);
  for (let offset = 0; offset + 1 < dataBytes; offset += 2) samples.writeInt16LE(Math.round(8_000 * Math.sin(offset / 20)), offset);
  return Buffer.concat([header, samples]);
}

/** Price in micro-units of `seconds` of audio at `perMinute` (decimal text), rounded half up to a micro-unit. */
export function perMinuteMicros(perMinute: string, seconds: number): bigint {
  const [whole = '0', fraction = ''] = perMinute.split('.');
  const nanos = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
  const total = (nanos * BigInt(Math.ceil(seconds))) / 60n;
  return (total + 500n) / 1_000n;
}
