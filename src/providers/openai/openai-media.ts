import { z } from 'zod';
import { FormData } from 'undici';
import type { HttpClient } from '../http-client.ts';
import { UpstreamError } from '../upstream-error.ts';
import { openAiHeaders, openAiUrl, type OpenAiEndpoint } from './openai-api.ts';

export interface MediaFile {
  data: Buffer;
  contentType: string;
}

const imagesResponse = z.object({
  data: z.array(z.object({ b64_json: z.string().optional(), url: z.string().optional() })),
});

const videoObject = z.looseObject({
  id: z.string(),
  status: z.string(),
  progress: z.number().optional(),
  error: z.looseObject({ message: z.string().optional() }).nullable().optional(),
});

export type VideoStatus = z.infer<typeof videoObject>;

/** OpenAI-format media APIs: images, speech, video generation and transcription, for the task workers. */
export class OpenAiMedia {
  constructor(
    readonly id: string,
    private readonly endpoint: OpenAiEndpoint,
    private readonly http: HttpClient,
  ) {}

  private async postJson(path: string, body: unknown, requestId: string): Promise<unknown> {
    const response = await this.http.send(openAiUrl(this.endpoint, path), { headers: openAiHeaders(this.endpoint, requestId), body: JSON.stringify(body) });
    return this.http.json<unknown>(response);
  }

  private async download(url: string, requestId: string, method: 'GET' = 'GET'): Promise<MediaFile> {
    const response = await this.http.send(url, { method, headers: openAiHeaders(this.endpoint, requestId) });
    const data = Buffer.from(await response.body.arrayBuffer());
    return { data, contentType: String(response.headers['content-type'] ?? 'application/octet-stream').split(';')[0]! };
  }

  /** POST /images/generations; files come back as bytes whether the vendor sent base64 or a URL. */
  async images(request: { model: string; prompt: string; n: number; size?: string }, requestId: string): Promise<MediaFile[]> {
    const parsed = imagesResponse.safeParse(await this.postJson('/images/generations', { ...request }, requestId));
    if (!parsed.success) throw new UpstreamError(502, '', 'text/plain', 'images response without data');
    const files: MediaFile[] = [];
    for (const item of parsed.data.data) {
      if (item.b64_json) files.push({ data: Buffer.from(item.b64_json, 'base64'), contentType: 'image/png' });
      else if (item.url) files.push(await this.download(item.url, requestId));
    }
    return files;
  }

  /** POST /audio/speech → the audio bytes. */
  async speech(request: { model: string; input: string; voice: string; response_format?: string }, requestId: string): Promise<MediaFile> {
    const response = await this.http.send(openAiUrl(this.endpoint, '/audio/speech'), { headers: openAiHeaders(this.endpoint, requestId), body: JSON.stringify(request) });
    const data = Buffer.from(await response.body.arrayBuffer());
    return { data, contentType: String(response.headers['content-type'] ?? 'audio/mpeg').split(';')[0]! };
  }

  async createVideo(request: { model: string; prompt: string; seconds?: string; size?: string }, requestId: string): Promise<VideoStatus> {
    return videoObject.parse(await this.postJson('/videos', request, requestId));
  }

  async videoStatus(videoId: string, requestId: string): Promise<VideoStatus> {
    const response = await this.http.send(openAiUrl(this.endpoint, `/videos/${encodeURIComponent(videoId)}`), { method: 'GET', headers: openAiHeaders(this.endpoint, requestId) });
    return videoObject.parse(await this.http.json<unknown>(response));
  }

  videoContent(videoId: string, requestId: string): Promise<MediaFile> {
    return this.download(openAiUrl(this.endpoint, `/videos/${encodeURIComponent(videoId)}/content`), requestId);
  }

  /** POST /audio/transcriptions (multipart); the vendor's body and type are returned as they are. */
  async transcribe(fields: Record<string, string | string[]>, file: { data: Buffer; filename: string; contentType: string }, requestId: string): Promise<{ body: string; contentType: string }> {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(file.data)], { type: file.contentType }), file.filename);
    for (const [name, value] of Object.entries(fields)) {
      if (Array.isArray(value)) for (const item of value) form.append(name, item);
      else form.set(name, value);
    }
    const headers = openAiHeaders(this.endpoint, requestId);
    delete headers['content-type'];
    const response = await this.http.send(openAiUrl(this.endpoint, '/audio/transcriptions'), { headers, body: form });
    return { body: await response.body.text(), contentType: String(response.headers['content-type'] ?? 'application/json') };
  }
}
