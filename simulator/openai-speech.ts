// POST /v1/audio/speech (JSON in, audio bytes out).
// Audio: pcm = deterministicBytes(`speech\n${voice}\n${input}`, 64 × max(1, countTokens(input))), i.e. 16-bit
// little-endian mono samples at 24 kHz. `wav` wraps it in a 44-byte RIFF header; `pcm` is it raw; mp3, opus,
// aac and flac are a fixed magic prefix (SPEECH_MAGIC) followed by it. `voice` is the string or the `{id}`;
// `speed` (0.25–4) and `instructions` are validated / ignored and never change the bytes.

import type { Exchange } from './exchange.ts';
import { sendBytes, sendJson } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { deterministicBytes, wavFile } from './media-bytes.ts';
import { countTokens } from './text.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export type SpeechFormat = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

export const SPEECH_CONTENT_TYPES: Readonly<Record<SpeechFormat, string>> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** Prefixes of the non-wav formats: an empty ID3v2.4 tag, an Ogg page capture pattern, an ADTS header, the FLAC marker. */
export const SPEECH_MAGIC: Readonly<Record<'mp3' | 'opus' | 'aac' | 'flac', Buffer>> = {
  mp3: Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]),
  opus: Buffer.from([0x4f, 0x67, 0x67, 0x53, 0x00, 0x02]),
  aac: Buffer.from([0xff, 0xf1, 0x50, 0x80, 0x00, 0x1f, 0xfc]),
  flac: Buffer.from('fLaC', 'ascii'),
};

export const SPEECH_SAMPLE_RATE = 24_000;
export const SPEECH_PCM_BYTES_PER_TOKEN = 64;
export const SPEECH_MAX_INPUT_CHARS = 4096;

function isSpeechFormat(value: unknown): value is SpeechFormat {
  return typeof value === 'string' && Object.hasOwn(SPEECH_CONTENT_TYPES, value);
}

/** The raw 24 kHz 16-bit mono samples for an input and voice. */
export function speechPcm(input: string, voice: string): Buffer {
  return deterministicBytes(`speech\n${voice}\n${input}`, SPEECH_PCM_BYTES_PER_TOKEN * Math.max(1, countTokens(input)));
}

/** The exact response body of POST /v1/audio/speech. */
export function speechAudio(input: string, voice: string, format: SpeechFormat = 'mp3'): Buffer {
  const pcm = speechPcm(input, voice);
  if (format === 'wav') return wavFile(pcm, SPEECH_SAMPLE_RATE);
  if (format === 'pcm') return pcm;
  return Buffer.concat([SPEECH_MAGIC[format], pcm]);
}

function voiceName(voice: unknown): string | undefined {
  if (typeof voice === 'string' && voice !== '') return voice;
  if (isRecord(voice) && typeof voice.id === 'string' && voice.id !== '') return voice.id;
  return undefined;
}

function missing(param: string): ReturnType<typeof openAiError> {
  return openAiError(`Missing required parameter: '${param}'.`, 'invalid_request_error', param, 'missing_required_parameter');
}

export function handleSpeech(exchange: Exchange): void {
  const body = exchange.json;
  const response = exchange.response;
  if (!isRecord(body)) return sendJson(response, 400, openAiError('Invalid body: expected a JSON object.', 'invalid_request_error'));
  if (typeof body.model !== 'string' || body.model === '') return sendJson(response, 400, missing('model'));
  if (typeof body.input !== 'string' || body.input === '') return sendJson(response, 400, missing('input'));
  const voice = voiceName(body.voice);
  if (voice === undefined) return sendJson(response, 400, missing('voice'));
  if (body.input.length > SPEECH_MAX_INPUT_CHARS) {
    return sendJson(response, 400, openAiError(
      `Invalid 'input': string too long. Expected a string with maximum length ${SPEECH_MAX_INPUT_CHARS}, but got a string with length ${body.input.length} instead.`,
      'invalid_request_error', 'input', 'string_above_max_length',
    ));
  }
  const format = body.response_format ?? 'mp3';
  if (!isSpeechFormat(format)) {
    return sendJson(response, 400, openAiError(
      `Invalid value: ${JSON.stringify(format)}. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.`,
      'invalid_request_error', 'response_format', 'invalid_value',
    ));
  }
  const speed = body.speed ?? 1;
  if (typeof speed !== 'number' || !(speed >= 0.25 && speed <= 4)) {
    return sendJson(response, 400, openAiError(
      `Invalid 'speed': expected a number between 0.25 and 4.0, but got ${JSON.stringify(speed)} instead.`,
      'invalid_request_error', 'speed', 'invalid_value',
    ));
  }
  if (body.model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(body.model));
  sendBytes(response, 200, speechAudio(body.input, voice, format), SPEECH_CONTENT_TYPES[format]);
}
