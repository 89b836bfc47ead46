import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI, { toFile } from 'openai';
import {
  countTokens,
  embeddingVector,
  openAiPromptTokens,
  replyText,
  startSimulator,
  toolResultReplyText,
  type Simulator,
} from './server.ts';

let simulator: Simulator;
let client: OpenAI;

before(async () => {
  simulator = await startSimulator();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${simulator.url}/v1`, maxRetries: 0 });
});
after(() => simulator.close());
beforeEach(() => simulator.reset());

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' }, unit: { enum: ['c', 'f'] } }, required: ['city', 'days'] },
  },
};

describe('chat completions', () => {
  it('answers deterministically with exact usage', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'system' as const, content: 'Be brief.' }, { role: 'user' as const, content: 'What is the capital of France?' }] };
    const first = await client.chat.completions.create(body);
    const second = await client.chat.completions.create(body);
    const expected = replyText('What is the capital of France?', 16);
    assert.equal(first.choices[0]?.message.content, expected);
    assert.equal(second.choices[0]?.message.content, expected);
    assert.equal(first.choices[0]?.finish_reason, 'stop');
    assert.match(first.id, /^chatcmpl-\d+$/);
    assert.equal(first.object, 'chat.completion');
    assert.equal(typeof first.system_fingerprint, 'string');
    assert.deepEqual(first.usage, {
      prompt_tokens: countTokens('Be brief.') + countTokens('What is the capital of France?'),
      completion_tokens: 16,
      total_tokens: countTokens('Be brief.') + countTokens('What is the capital of France?') + 16,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    });
    assert.equal(countTokens(expected), 16);
    assert.equal(simulator.lastRequest('/v1/chat')?.headers.authorization, 'Bearer sk-test');
  });

  it('streams the same content and usage with include_usage', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Tell me a story about a cat' }] };
    const plain = await client.chat.completions.create(body);
    const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } });
    let content = '';
    let contentChunks = 0;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    let first = true;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (first) assert.equal(choice?.delta.role, 'assistant');
      first = false;
      if (choice?.delta.content) {
        content += choice.delta.content;
        contentChunks += 1;
      }
      if (choice?.finish_reason) finish = choice.finish_reason;
      if (chunk.choices.length === 0) usage = chunk.usage;
      else assert.equal(chunk.usage, null);
    }
    assert.equal(content, plain.choices[0]?.message.content);
    assert.equal(contentChunks, 8);
    assert.equal(finish, 'stop');
    assert.deepEqual(usage, plain.usage);
  });

  it('streams without usage chunks unless asked, ending with [DONE]', async () => {
    const response = await fetch(`${simulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await response.text();
    assert.ok(text.endsWith('data: [DONE]\n\n'));
    assert.ok(!text.includes('"usage"'));
    assert.ok(!text.includes('event:'));
  });

  it('calls the first tool with schema-built arguments, stream and not', async () => {
    const body = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'Weather in Paris?' }], tools: [weatherTool] };
    const plain = await client.chat.completions.create(body);
    const call = plain.choices[0]?.message.tool_calls?.[0];
    assert.equal(plain.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(plain.choices[0]?.message.content, null);
    assert.ok(call !== undefined && call.type === 'function');
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), { city: 'sample', days: 1 });
    assert.equal(plain.usage?.completion_tokens, countTokens(call.function.arguments));
    assert.equal(plain.usage?.prompt_tokens, openAiPromptTokens(body));

    const stream = client.chat.completions.stream({ ...body, stream_options: { include_usage: true } });
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0]?.message.tool_calls?.[0];
    assert.ok(streamed !== undefined && streamed.type === 'function');
    assert.equal(streamed.function.arguments, call.function.arguments);
    assert.match(streamed.id, /^call_/);
    assert.equal(final.choices[0]?.finish_reason, 'tool_calls');
  });

  it('honours a named tool_choice and "none", and answers a tool result with text', async () => {
    const other = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } } };
    const named = await client.chat.completions.create({
      model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool, other], tool_choice: { type: 'function', function: { name: 'lookup' } },
    });
    const call = named.choices[0]?.message.tool_calls?.[0];
    assert.ok(call?.type === 'function');
    assert.equal(call.function.name, 'lookup');
    const none = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools: [weatherTool], tool_choice: 'none' });
    assert.equal(none.choices[0]?.finish_reason, 'stop');
    const result = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 24 degrees' },
      ],
    });
    assert.equal(result.choices[0]?.message.content, toolResultReplyText('Sunny, 24 degrees'));
  });

  it('applies n, stop, max_completion_tokens, response formats, images and SIM_ECHO', async () => {
    const n = await client.chat.completions.create({ model: 'gpt-4o', n: 3, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(n.choices.length, 3);
    assert.equal(n.usage?.completion_tokens, 48);
    const stop = await client.chat.completions.create({ model: 'gpt-4o', stop: ['bravo'], messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(stop.choices[0]?.message.content, 'Simulated reply to: hello alpha ');
    assert.equal(stop.choices[0]?.finish_reason, 'stop');
    const capped = await client.chat.completions.create({ model: 'gpt-4o', max_completion_tokens: 5, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(capped.choices[0]?.message.content, 'Simulated reply to: ');
    assert.equal(capped.choices[0]?.finish_reason, 'length');
    assert.equal(capped.usage?.completion_tokens, 5);
    const json = await client.chat.completions.create({ model: 'gpt-4o', response_format: { type: 'json_object' }, messages: [{ role: 'user', content: 'json' }] });
    assert.equal(json.choices[0]?.message.content, '{}');
    const schema = await client.chat.completions.create({
      model: 'gpt-4o',
      response_format: { type: 'json_schema', json_schema: { name: 'p', schema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } }, required: ['name', 'age', 'tags'] } } },
      messages: [{ role: 'user', content: 'person' }],
    });
    assert.deepEqual(JSON.parse(schema.choices[0]?.message.content ?? ''), { name: 'sample', age: 1, tags: ['sample'] });
    const image = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
    });
    assert.equal(image.usage?.prompt_tokens, countTokens('What is this?') + 85);
    const echo = 'SIM_ECHO please repeat exactly this sentence, which is longer than sixteen tokens for sure.';
    const echoed = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: echo }] });
    assert.equal(echoed.choices[0]?.message.content, echo);
  });

  it('reports cached tokens for a repeated long prefix', async () => {
    const long = 'lorem ipsum dolor sit amet '.repeat(200);
    const messages = [{ role: 'system' as const, content: long }, { role: 'user' as const, content: 'first question' }];
    const first = await client.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(first.usage?.prompt_tokens_details?.cached_tokens, 0);
    const second = await client.chat.completions.create({ model: 'gpt-4o', messages: [messages[0]!, { role: 'user', content: 'second question' }] });
    assert.equal(second.usage?.prompt_tokens_details?.cached_tokens, Math.floor(countTokens(long) / 128) * 128);
    const otherModel = await client.chat.completions.create({ model: 'gpt-4.1', messages });
    assert.equal(otherModel.usage?.prompt_tokens_details?.cached_tokens, 0);
  });

  it('returns vendor errors for bad bodies, missing models and missing keys', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'gpt-4o' } as never), (error: unknown) => {
      assert.ok(error instanceof OpenAI.BadRequestError);
      assert.equal(error.param, 'messages');
      assert.equal(error.type, 'invalid_request_error');
      return true;
    });
    await assert.rejects(client.chat.completions.create({ model: 'missing-gpt', messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.deepEqual(error.error, { message: 'The model `missing-gpt` does not exist or you do not have access to it.', type: 'invalid_request_error', param: null, code: 'model_not_found' });
      return true;
    });
    const response = await fetch(`${simulator.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 401);
    const body = (await response.json()) as { error: { type: string } };
    assert.equal(body.error.type, 'invalid_request_error');
  });
});

describe('embeddings, moderations, models', () => {
  it('gives deterministic unit vectors that agree in float and base64', async () => {
    const floats = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'], encoding_format: 'float' });
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    assert.equal(floats.data.length, 2);
    assert.equal(floats.data[0]?.embedding.length, 1536);
    assert.deepEqual(decoded.data[0]?.embedding, floats.data[0]?.embedding);
    assert.deepEqual(floats.data[1]?.embedding, Array.from(embeddingVector('beta', 1536)));
    const norm = Math.sqrt((floats.data[0]?.embedding ?? []).reduce((sum, value) => sum + value * value, 0));
    assert.ok(Math.abs(norm - 1) < 1e-5);
    assert.deepEqual(floats.usage, { prompt_tokens: countTokens('alpha') + countTokens('beta'), total_tokens: countTokens('alpha') + countTokens('beta') });
    const small = await client.embeddings.create({ model: 'text-embedding-3-large', input: [[1, 2, 3]], dimensions: 64, encoding_format: 'float' });
    assert.equal(small.data[0]?.embedding.length, 64);
    assert.equal(small.usage.prompt_tokens, 3);
  });

  it('flags trigger words with omni and legacy category sets', async () => {
    const omni = await client.moderations.create({ input: ['I will kill you', 'I like flowers', 'I hate this', 'thinking about suicide'] });
    assert.equal(omni.model, 'omni-moderation-latest');
    assert.match(omni.id, /^modr-/);
    assert.equal(omni.results.length, 4);
    const [kill, calm, hate, selfHarm] = omni.results;
    assert.equal(Object.keys(kill?.categories ?? {}).length, 13);
    assert.ok('illicit/violent' in (kill?.categories ?? {}));
    assert.equal(kill?.flagged, true);
    assert.equal(kill?.categories.violence, true);
    assert.ok((kill?.category_scores.violence ?? 0) >= 0.5);
    assert.equal(calm?.flagged, false);
    assert.ok(Object.values(calm?.category_scores ?? {}).every((score) => score < 0.01));
    assert.equal(hate?.categories.hate, true);
    assert.equal(selfHarm?.categories['self-harm'], true);
    const legacy = await client.moderations.create({ model: 'text-moderation-latest', input: 'murder' });
    assert.equal(Object.keys(legacy.results[0]?.categories ?? {}).length, 11);
    assert.equal(legacy.results[0]?.flagged, true);
  });

  it('generates images and transcribes audio', async () => {
    const image = await client.images.generate({ model: 'gpt-image-1', prompt: 'a cat', n: 2 });
    assert.equal(image.data?.length, 2);
    assert.ok(image.data?.[0]?.b64_json);
    assert.deepEqual(image.usage, { input_tokens: countTokens('a cat'), output_tokens: 2112, total_tokens: countTokens('a cat') + 2112, input_tokens_details: { text_tokens: countTokens('a cat'), image_tokens: 0 } });
    const dalle = await client.images.generate({ model: 'dall-e-3', prompt: 'a dog' });
    assert.ok(dalle.data?.[0]?.url?.startsWith(`${simulator.url}/_sim/files/img-`));
    const file = await toFile(Buffer.alloc(32_000, 1), 'speech.wav', { type: 'audio/wav' });
    const transcription = await client.audio.transcriptions.create({ model: 'whisper-1', file });
    assert.equal(transcription.text, 'Simulated transcription of 32000 bytes of audio.');
    const text = await client.audio.transcriptions.create({ model: 'gpt-4o-transcribe', file: await toFile(Buffer.alloc(10), 'a.wav'), response_format: 'text' });
    assert.equal(String(text).trim(), 'Simulated transcription of 10 bytes of audio.');
    await assert.rejects(client.audio.transcriptions.create({ model: 'missing-whisper', file: await toFile(Buffer.alloc(10), 'a.wav') }), OpenAI.NotFoundError);
  });

  it('lists models', async () => {
    const page = await client.models.list();
    assert.ok(page.data.some((model) => model.id === 'gpt-4o'));
  });
});
