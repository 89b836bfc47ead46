// POST /v1/audio/transcriptions (multipart/form-data).
// text = `Simulated transcription of <file bytes> bytes of audio.`; duration = max(1, ceil(bytes / 16000)) s.
// Usage: whisper-1 → {type:"duration", seconds}; other models → {type:"tokens", input_tokens = duration × 10,
// output_tokens = countTokens(text)}. response_format json (default), text, srt, vtt or verbose_json.

import type { Exchange } from './exchange.ts';
import { sendJson, sendText } from './exchange.ts';
import { parseMultipart } from './multipart-form.ts';
import { countTokens } from './text.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export function transcriptionText(fileBytes: number): string {
  return `Simulated transcription of ${fileBytes} bytes of audio.`;
}

function timestamp(seconds: number, separator: string): string {
  const pad = (value: number, width = 2): string => String(value).padStart(width, '0');
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}${separator}000`;
}

export function handleTranscriptions(exchange: Exchange): void {
  const response = exchange.response;
  const contentType = exchange.headers['content-type'] ?? '';
  const form = contentType.startsWith('multipart/form-data') ? parseMultipart(exchange.bodyBytes, contentType) : undefined;
  if (form === undefined) {
    return sendJson(response, 400, openAiError('Invalid Content-Type header: expected multipart/form-data.', 'invalid_request_error'));
  }
  const model = form.fields.get('model');
  if (model === undefined || model === '') {
    return sendJson(response, 400, openAiError("Missing required parameter: 'model'.", 'invalid_request_error', 'model', 'missing_required_parameter'));
  }
  const fileBytes = form.files.get('file');
  if (fileBytes === undefined) {
    return sendJson(response, 400, openAiError("Missing required parameter: 'file'.", 'invalid_request_error', 'file', 'missing_required_parameter'));
  }
  if (model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(model));
  const text = transcriptionText(fileBytes);
  const duration = Math.max(1, Math.ceil(fileBytes / 16000));
  const usage = model === 'whisper-1'
    ? { type: 'duration', seconds: duration }
    : { type: 'tokens', input_tokens: duration * 10, output_tokens: countTokens(text), total_tokens: duration * 10 + countTokens(text) };
  switch (form.fields.get('response_format') ?? 'json') {
    case 'text':
      return sendText(response, 200, `${text}\n`, 'text/plain; charset=utf-8');
    case 'srt':
      return sendText(response, 200, `1\n${timestamp(0, ',')} --> ${timestamp(duration, ',')}\n${text}\n\n`, 'text/plain; charset=utf-8');
    case 'vtt':
      return sendText(response, 200, `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(duration, '.')}\n${text}\n\n`, 'text/plain; charset=utf-8');
    case 'verbose_json':
      return sendJson(response, 200, {
        task: 'transcribe',
        language: form.fields.get('language') ?? 'english',
        duration,
        text,
        segments: [{ id: 0, seek: 0, start: 0, end: duration, text, tokens: [], temperature: 0, avg_logprob: -0.1, compression_ratio: 1, no_speech_prob: 0 }],
        usage,
      });
    default:
      return sendJson(response, 200, { text, usage });
  }
}
