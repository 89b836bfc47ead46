import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../../../simulator/server.ts';
import { GatewayError } from '../../core/errors.ts';
import { ManualClock } from '../../lib/clock.ts';
import { ChannelClient } from '../channels/channel-client.ts';
import { UpstreamRoute } from '../channels/upstream-route.ts';
import { HttpClient } from '../http-client.ts';
import { UpstreamError } from '../upstream-error.ts';
import { AnthropicChatProvider } from './anthropic-chat-provider.ts';

describe('AnthropicChatProvider against the simulated Messages API', () => {
  let simulator: Simulator;
  let http: HttpClient;
  let provider: AnthropicChatProvider;
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  const options = { requestId: 'req_test', route: new UpstreamRoute('claude-haiku-4-5-20251001') };
  const request = { model: 'claude-haiku-4-5-20251001', messages: [{ role: 'user' as const, content: 'Hello' }] };

  before(async () => {
    simulator = await startSimulator({ streamChunks: 6 });
    http = new HttpClient(5_000);
    provider = new AnthropicChatProvider('anthropic', ChannelClient.single('anthropic', { baseUrl: simulator.url, apiKey: 'sk-ant-test' }, http), clock);
  });
  after(async () => {
    await http.close();
    await simulator.close();
  });

  test('sends the request id and key; `created` comes from the injected clock', async () => {
    const response = await provider.chatCompletion(request, options);
    assert.equal(response.created, Date.parse('2026-11-01T00:00:00Z') / 1000);
    const sent = simulator.lastRequest('/v1/messages');
    assert.equal(sent?.headers['x-request-id'], 'req_test');
    assert.equal(sent?.headers['x-api-key'], 'sk-ant-test');
  });

  test('closing a stream early stops the upstream call: reading on ends or fails at once instead of waiting out the stream', async () => {
    simulator.options.chunkDelayMs = 1_000;
    try {
      const stream = await provider.chatCompletionStream({ ...request, stream: true }, options);
      const iterator = stream[Symbol.asyncIterator]();
      const first = await iterator.next();
      assert.equal(first.done, false);
      const started = Date.now();
      stream.close();
      // Six chunks 1 s apart remain; after close() the reader must not wait for them.
      try {
        while (!(await iterator.next()).done);
      } catch (error) {
        assert.ok(error instanceof UpstreamError);
      }
      assert.ok(Date.now() - started < 500, `reading on took ${Date.now() - started} ms`);
    } finally {
      simulator.options.chunkDelayMs = 0;
    }
  });

  test('a vendor error before the stream begins rejects the call with an UpstreamError in the OpenAI shape', async () => {
    simulator.addFault({ match: { path: '/v1/messages' }, status: 400 });
    await assert.rejects(provider.chatCompletionStream({ ...request, stream: true }, options), (error: unknown) => {
      assert.ok(error instanceof UpstreamError);
      assert.equal(error.status, 400);
      assert.deepEqual(JSON.parse(error.body), { error: { message: 'Invalid request', type: 'invalid_request_error', param: null, code: null } });
      return true;
    });
  });

  test('embeddings and moderations are refused: Anthropic has neither', async () => {
    const isInvalid = (error: unknown): boolean => error instanceof GatewayError && error.code === 'invalid_request' && /Anthropic provider does not serve/.test(error.message);
    await assert.rejects(provider.embeddings(), isInvalid);
    await assert.rejects(provider.moderations(), isInvalid);
  });
});
