import { z } from 'zod';
import { FormData } from 'undici';
import type { ChannelClient } from '../channels/channel-client.ts';
import type { UpstreamRoute } from '../channels/upstream-route.ts';
import { UpstreamError } from '../upstream-error.ts';
import { openAiHeaders, openAiUrl, type OpenAiEndpoint } from './openai-api.ts';

/** One media call: its request id, its route through the channels, and the channel a follow-up must use (a video's). */
export interface MediaCall {
  requestId: string;
  route: UpstreamRoute;
  channel?: string | null;
}

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
    private readonly http: ChannelClient,
  ) {}

  private async postJson(path: string, body: unknown, call: MediaCall): Promise<unknown> {
    const response = await this.http.send(
      (endpoint) => ({ url: openAiUrl(endpoint, path), headers: openAiHeaders(endpoint, call.requestId) }),
      { body: JSON.stringify(body) },
      call.route,
      call.channel,
    );
    return this.http.json<unknown>(response);
  }

  /** GET of a file: `url` is absolute, or a path under the channel's base URL; `call.channel` keeps it on the channel that made it. */
  private async download(url: string | ((endpoint: OpenAiEndpoint) => string), call: MediaCall): Promise<MediaFile> {
    const response = await this.http.send(
      (endpoint) => ({ url: typeof url === 'string' ? url : url(endpoint), headers: openAiHeaders(endpoint, call.requestId) }),
      { method: 'GET' },
      call.route,
      call.channel,
    );
    const data = Buffer.from(await response.body.arrayBuffer());
    return { data, contentType: (response.contentType ?? 'application/octet-stream').split(';')[0]! };
  }

  /** POST /images/generations; files come back as bytes whether the vendor sent base64 or a URL. */
  async images(request: { model: string; prompt: string; n: number; size?: string }, call: MediaCall): Promise<MediaFile[]> {
    const parsed = imagesResponse.safeParse(await this.postJson('/images/generations', { ...request }, call));
    if (!parsed.success) throw new UpstreamError(502, '', 'text/plain', 'images response without data');
    const files: MediaFile[] = [];
    for (const item of parsed.data.data) {
      if (item.b64_json) files.push({ data: Buffer.from(item.b64_json, 'base64'), contentType: 'image/png' });
      // The files sit with the account that made them: the download goes through the channel that answered.
      else if (item.url) files.push(await this.download(item.url, { ...call, channel: call.route.channel }));
    }
    return files;
  }

  /** POST /audio/speech → the audio bytes. */
  async speech(request: { model: string; input: string; voice: string; response_format?: string }, call: MediaCall): Promise<MediaFile> {
    const response = await this.http.send(
      (endpoint) => ({ url: openAiUrl(endpoint, '/audio/speech'), headers: openAiHeaders(endpoint, call.requestId) }),
      { body: JSON.stringify(request) },
      call.route,
    );
    const data = Buffer.from(await response.body.arrayBuffer());
    return { data, contentType: (response.contentType ?? 'audio/mpeg').split(';')[0]! };
  }

  /** Starts a video; `call.route.channel` then names the channel whose account holds it (polls must go there). */
  async createVideo(request: { model: string; prompt: string; seconds?: string; size?: string }, call: MediaCall): Promise<VideoStatus> {
    return videoObject.parse(await this.postJson('/videos', request, call));
  }

  async videoStatus(videoId: string, call: MediaCall): Promise<VideoStatus> {
    const response = await this.http.send(
      (endpoint) => ({ url: openAiUrl(endpoint, `/videos/${encodeURIComponent(videoId)}`), headers: openAiHeaders(endpoint, call.requestId) }),
      { method: 'GET' },
      call.route,
      call.channel,
    );
    return videoObject.parse(await this.http.json<unknown>(response));
  }

  videoContent(videoId: string, call: MediaCall): Promise<MediaFile> {
    return this.download((endpoint) => openAiUrl(endpoint, `/videos/${encodeURIComponent(videoId)}/content`), call);
  }

  /** POST /audio/transcriptions (multipart); the vendor's body and type are returned as they are. */
  async transcribe(fields: Record<string, string | string[]>, file: { data: Buffer; filename: string; contentType: string }, call: MediaCall): Promise<{ body: string; contentType: string }> {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(file.data)], { type: file.contentType }), file.filename);
    for (const [name, value] of Object.entries(fields)) {
      if (Array.isArray(value)) for (const item of value) form.append(name, item);
      else form.set(name, value);
    }
    const target = (endpoint: OpenAiEndpoint) => {
      const headers = openAiHeaders(endpoint, call.requestId);
      delete headers['content-type'];
      return { url: openAiUrl(endpoint, '/audio/transcriptions'), headers };
    };
    const response = await this.http.send(target, { body: form }, call.route);
    return { body: await response.body.text(), contentType: response.contentType ?? 'application/json' };
  }
}
