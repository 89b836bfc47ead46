// Concurrency 1 over a single kept-alive connection, each request timed with process.hrtime.bigint() (autocannon only
// reports whole milliseconds): the non-streaming round trip, and the time to the first `data:` byte of a stream.

import { Client, type Dispatcher } from 'undici';
import { distribution, millisecondsSince, type Distribution } from './percentiles.ts';
import { CHAT_BODY, CHAT_PATH, STREAM_BODY, type Target } from './targets.ts';

export interface RoundTripResult {
  /** Milliseconds, request start to the last byte of the body. */
  latency: Distribution;
  /** Non-200 answers and transport failures among the measured requests. */
  errors: number;
}

export interface FirstTokenResult {
  /** Milliseconds, request start to the first body byte carrying `data:`. */
  firstToken: Distribution;
  errors: number;
  /** 200 answers whose stream did not end with `data: [DONE]`. */
  incomplete: number;
}

const TIMEOUTS = { headersTimeout: 30_000, bodyTimeout: 30_000 };

function oneConnection(target: Target): Client {
  return new Client(target.origin, { pipelining: 1, keepAliveTimeout: 30_000, ...TIMEOUTS });
}

async function roundTrip(client: Client, target: Target): Promise<number | undefined> {
  const started = process.hrtime.bigint();
  try {
    const response = await client.request({ path: CHAT_PATH, method: 'POST', headers: target.headers, body: CHAT_BODY });
    await response.body.arrayBuffer();
    const elapsed = millisecondsSince(started);
    return response.statusCode === 200 ? elapsed : undefined;
  } catch {
    return undefined;
  }
}

export async function measureRoundTrips(target: Target, warmup: number, count: number): Promise<RoundTripResult> {
  const client = oneConnection(target);
  try {
    for (let index = 0; index < warmup; index++) await roundTrip(client, target);
    const samples: number[] = [];
    let errors = 0;
    for (let index = 0; index < count; index++) {
      const elapsed = await roundTrip(client, target);
      if (elapsed === undefined) errors++;
      else samples.push(elapsed);
    }
    return { latency: distribution(samples), errors };
  } finally {
    await client.close();
  }
}

export interface StreamOutcome {
  status: number;
  /** Milliseconds to the first `data:` byte, if one came. */
  firstTokenMs: number | undefined;
  complete: boolean;
}

/** Sends one streaming chat request and reads it to the end; `onOpen` fires when the answer's head arrives. */
export async function readOneStream(dispatcher: Dispatcher, target: Target, onOpen?: () => void): Promise<StreamOutcome> {
  const started = process.hrtime.bigint();
  const response = await dispatcher.request({ path: CHAT_PATH, method: 'POST', headers: target.headers, body: STREAM_BODY });
  onOpen?.();
  let firstTokenMs: number | undefined;
  let head = '';
  let tail = '';
  for await (const chunk of response.body) {
    const text = (chunk as Buffer).toString('latin1');
    if (firstTokenMs === undefined) {
      const window = head + text;
      if (window.includes('data:')) firstTokenMs = millisecondsSince(started);
      else head = window.slice(-8);
    }
    tail = (tail + text).slice(-64);
  }
  return { status: response.statusCode, firstTokenMs, complete: tail.trimEnd().endsWith('data: [DONE]') };
}

export async function measureFirstToken(target: Target, warmup: number, count: number): Promise<FirstTokenResult> {
  const client = oneConnection(target);
  try {
    const samples: number[] = [];
    let errors = 0;
    let incomplete = 0;
    for (let index = 0; index < warmup + count; index++) {
      const measured = index >= warmup;
      try {
        const outcome = await readOneStream(client, target);
        if (!measured) continue;
        if (outcome.status !== 200) errors++;
        else if (!outcome.complete || outcome.firstTokenMs === undefined) incomplete++;
        else samples.push(outcome.firstTokenMs);
      } catch {
        if (measured) errors++;
      }
    }
    return { firstToken: distribution(samples), errors, incomplete };
  } finally {
    await client.close();
  }
}
