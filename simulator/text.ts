// Deterministic text and token rules shared by every simulated endpoint. Tests compute expected
// replies and usage with these exports, so any change here is a change of the simulator's contract.

/**
 * Token estimate used for every count the simulator reports: `Math.ceil(utf8ByteLength / 4)`.
 * Counts are taken per text part and summed (never over a concatenation), so prefix counts add up.
 */
export function countTokens(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** Fixed token count of one image part (OpenAI `image_url`, Anthropic `image` / non-text `document`). */
export const IMAGE_TOKENS = 85;

/** A last user message containing this marker is echoed back in full instead of the simulated reply. */
export const ECHO_MARKER = 'SIM_ECHO';

/** Filler vocabulary appended, in this order and cycling, after the reply's opening sentence. */
export const FILLER_WORDS: readonly string[] = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel',
  'india', 'juliet', 'kilo', 'lima', 'mike', 'november', 'oscar', 'papa',
];

/** First `count` UTF-16 units of `text`, never ending inside a surrogate pair. */
export function firstChars(text: string, count: number): string {
  if (text.length <= count) return text;
  const code = text.charCodeAt(count - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? count - 1 : count;
  return text.slice(0, end);
}

/**
 * Pads `opening` with filler words until it is exactly `targetTokens` tokens long (4 bytes per token;
 * the last filler word is shortened to land exactly). Text already at or over the target is returned as is.
 */
export function padToTokens(opening: string, targetTokens: number): string {
  let text = opening;
  let bytes = Buffer.byteLength(text, 'utf8');
  const targetBytes = targetTokens * 4;
  for (let index = 0; bytes < targetBytes - 3; index += 1) {
    const word = FILLER_WORDS[index % FILLER_WORDS.length] ?? 'alpha';
    const room = targetBytes - bytes - 1;
    const piece = word.length <= room ? word : word.slice(0, room);
    text += ` ${piece}`;
    bytes += piece.length + 1;
  }
  return text;
}

/**
 * The reply to a user text, before any max-tokens cap: the full text when it contains `SIM_ECHO`,
 * otherwise `Simulated reply to: <first 40 chars>` padded with filler words to `replyTokens` tokens.
 */
export function replyText(lastUserText: string, replyTokens: number): string {
  if (lastUserText.includes(ECHO_MARKER)) return lastUserText;
  return padToTokens(`Simulated reply to: ${firstChars(lastUserText, 40)}`, replyTokens);
}

/** The reply after a tool result (no filler): `Tool result received: <first 60 chars of the result>`. */
export function toolResultReplyText(resultText: string): string {
  return `Tool result received: ${firstChars(resultText, 60)}`;
}

/** Thinking text of a reply with thinking enabled: `Simulated thinking about: <first 40 chars>.` */
export function thinkingText(lastUserText: string): string {
  return `Simulated thinking about: ${firstChars(lastUserText, 40)}.`;
}

/** Longest prefix of `text` whose `countTokens` is at most `maxTokens` (cut on a code point boundary). */
export function truncateToTokens(text: string, maxTokens: number): string {
  if (countTokens(text) <= maxTokens) return text;
  const maxBytes = Math.max(0, maxTokens) * 4;
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = Buffer.byteLength(char, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}

export interface FinishedText {
  text: string;
  /** Why the text ended: `stop` (natural end), `stop_sequence` or `max_tokens`. */
  reason: 'stop' | 'stop_sequence' | 'max_tokens';
  /** The stop sequence that cut the text, when `reason` is `stop_sequence`. */
  stopSequence: string | null;
}

/**
 * Applies stop sequences (cut before the earliest occurrence) and then the token cap to a full reply.
 * `maxTokens` undefined means no cap.
 */
export function finishText(full: string, stops: readonly string[], maxTokens: number | undefined): FinishedText {
  let text = full;
  let reason: FinishedText['reason'] = 'stop';
  let stopSequence: string | null = null;
  let earliest = -1;
  for (const stop of stops) {
    const at = full.indexOf(stop);
    if (at >= 0 && (earliest < 0 || at < earliest)) {
      earliest = at;
      stopSequence = stop;
    }
  }
  if (earliest >= 0) {
    text = full.slice(0, earliest);
    reason = 'stop_sequence';
  }
  if (maxTokens !== undefined && countTokens(text) > maxTokens) {
    return { text: truncateToTokens(text, maxTokens), reason: 'max_tokens', stopSequence: null };
  }
  return { text, reason, stopSequence: reason === 'stop_sequence' ? stopSequence : null };
}

/**
 * Splits `text` into at most `count` pieces of near-equal length (by code points, no empty pieces);
 * concatenating the pieces gives `text` back. An empty text gives no pieces.
 */
export function splitIntoChunks(text: string, count: number): string[] {
  if (text === '') return [];
  const points = Array.from(text);
  const pieces = Math.max(1, Math.min(Math.floor(count), points.length));
  const result: string[] = [];
  for (let index = 0; index < pieces; index += 1) {
    const start = Math.floor((index * points.length) / pieces);
    const end = Math.floor(((index + 1) * points.length) / pieces);
    result.push(points.slice(start, end).join(''));
  }
  return result;
}
