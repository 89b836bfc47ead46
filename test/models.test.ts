import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { startTestGateway } from './helpers/gateway.ts';

test('GET /v1/models and /v1/models/:id through the openai SDK, with SPEC 2.3 fields and the key\'s allowed list', async () => {
  const gw = await startTestGateway();
  try {
    const { key, userId } = await gw.fundedKey();
    const client = new OpenAI({ apiKey: key, baseURL: gw.openAiBaseUrl, maxRetries: 0 });
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.ok(ids.includes('gpt-4o') && ids.includes('claude-sonnet-4-5') && ids.includes('text-embedding-3-small'));
    assert.ok(!ids.includes('sora-2'), 'media models are listed by /v1/media/models, not here');

    const one = (await client.models.retrieve('gpt-4.5-preview')) as unknown as Record<string, unknown>;
    assert.equal(one.object, 'model');
    assert.equal(one.cost_context, '0.0750');
    assert.equal(one.deprecated, true);
    assert.equal(one.deprecated_at, '2025-07-14T00:00:00.000Z');
    assert.equal(one.deprecation_redirect_to, 'gpt-4.1');
    assert.equal(one.shutdown_date, '2025-07-14');
    assert.equal(typeof one.created, 'number');
    assert.equal(typeof one.max_capacity, 'number');

    await assert.rejects(client.models.retrieve('no-such-model'), (error: unknown) => error instanceof OpenAI.NotFoundError);
    const limited = await gw.fundedKey({ userId, allowedModels: ['gpt-4o-mini'] });
    const limitedClient = new OpenAI({ apiKey: limited.key, baseURL: gw.openAiBaseUrl, maxRetries: 0 });
    assert.equal((await limitedClient.models.retrieve('gpt-4o-mini')).id, 'gpt-4o-mini');
    await assert.rejects(limitedClient.models.retrieve('gpt-4o'), (error: unknown) => error instanceof OpenAI.NotFoundError);
  } finally {
    await gw.close();
  }
});

test('GET /api/v1/models: the storefront catalog, public, every kind, prices per 1M tokens, retirement state, nothing internal', async () => {
  const gw = await startTestGateway();
  try {
    const response = await fetch(`${gw.url}/api/v1/models`);
    assert.equal(response.status, 200, 'no credential needed');
    const { data } = (await response.json()) as { data: Array<Record<string, unknown>> };
    const byId = new Map(data.map((model) => [model.id, model]));
    const gpt4o = byId.get('gpt-4o')!;
    assert.equal(gpt4o.input_per_million, '2.50');
    assert.equal(gpt4o.output_per_million, '10.00');
    assert.equal(gpt4o.kind, 'chat');
    assert.equal(gpt4o.vision, true);
    assert.ok(data.some((model) => model.kind === 'media'), 'media models are in the storefront');
    assert.equal(byId.get('gpt-4.5-preview')?.deprecated, true);
    const text = JSON.stringify(data);
    for (const internal of ['upstreamModel', 'apiKey', 'baseUrl', 'pricing']) assert.ok(!text.includes(internal), `${internal} is not shown`);
  } finally {
    await gw.close();
  }
});
