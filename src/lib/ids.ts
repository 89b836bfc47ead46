import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ALPHABET_BYTES = Buffer.from(ALPHABET, 'latin1');
/** Where an id's characters are written before they become one string (no typed array made per id). */
const scratch = Buffer.allocUnsafe(256);

/** Random bytes are drawn from the OS in blocks: one call per id was the largest cost of the request path. */
const POOL_SIZE = 8192;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function nextRandomByte(): number {
  if (poolOffset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** Random base62 text of `length` characters (rejection sampling keeps it uniform). */
export function randomBase62(length: number): string {
  // Characters written into one reused buffer, then read out as one flat string: appending character by character built a
  // rope of `length` pieces that every later use (a map key, an SQL parameter) had to flatten again, and a typed array per
  // id was garbage on every call — ids are made several times a request.
  if (length > scratch.length) return randomBase62(scratch.length) + randomBase62(length - scratch.length);
  for (let filled = 0; filled < length; ) {
    const byte = nextRandomByte();
    if (byte < 248) scratch[filled++] = ALPHABET_BYTES[byte % 62]!;
  }
  return scratch.toString('latin1', 0, length);
}

/** Every id prefix the gateway hands out, in one table. */
export const ID_PREFIXES = {
  user: 'usr',
  org: 'org',
  key: 'key',
  ledger: 'led',
  request: 'req',
  chatCompletion: 'chatcmpl',
  moderation: 'modr',
  task: 'task',
  delivery: 'dlv',
  assistant: 'asst',
  bot: 'bot',
  job: 'job',
  knowledgeBase: 'kb',
  knowledgeDocument: 'kdoc',
  knowledgeChunk: 'kchunk',
  audit: 'aud',
  invitation: 'inv',
  voucher: 'vch',
  /** The Responses API's own ids (OpenAI's prefixes, which clients recognise): response, message, function call, custom tool call, reasoning items. */
  response: 'resp',
  responseMessage: 'msg',
  functionCall: 'fc',
  customToolCall: 'ctc',
  reasoning: 'rs',
  payment: 'pay',
  mail: 'mail',
} as const;

export type IdKind = keyof typeof ID_PREFIXES;

let sequence = 0;
/** The current millisecond in base 36, made once per millisecond rather than once per id. */
let timeMs = -1;
let time36 = '';

/**
 * A prefixed id that sorts by creation: `usr_<time36><sequence36><random>`. The per-process sequence orders ids made in the
 * same millisecond (ledger entries of one batch come back newest first).
 */
export function newId(kind: IdKind): string {
  sequence = (sequence + 1) % 1_679_616; // 36^4
  const now = Date.now();
  if (now !== timeMs) {
    timeMs = now;
    time36 = now.toString(36).padStart(9, '0');
  }
  return `${ID_PREFIXES[kind]}_${time36}${sequence.toString(36).padStart(4, '0')}${randomBase62(10)}`;
}
