import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sampleFromSchema } from '../simulator/server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asRecord, errorB, postMessages, valuesOfKey, type JsonRecord, type RawResponse } from './helpers/messages-e2e.ts';

/** SPEC 4.2 "Changes made to the body before forwarding": each row checked on what the vendor (the simulator) received. */

const SONNET = 'claude-sonnet-4-5';
const SONNET_UPSTREAM = 'claude-sonnet-4-5-20250929';
const HAIKU = 'claude-haiku-4-5';
const HAIKU_UPSTREAM = 'claude-haiku-4-5-20251001';
const base = (extra: JsonRecord = {}): JsonRecord => ({ model: SONNET, max_tokens: 2048, messages: [{ role: 'user', content: 'Hello rewrites' }], ...extra });
const clearThinking = { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } };
const clearToolUses = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100000 }, keep: { type: 'tool_uses', value: 3 } };
const enabledThinking = { type: 'enabled', budget_tokens: 1024 };
const answerSchema = {
  type: 'object',
  properties: { answer: { type: 'string' }, score: { type: 'number', minimum: 0 }, tags: { type: 'array', items: { type: 'string' } } },
  required: ['answer', 'score'],
};
const outputConfig = { effort: 'high', format: { type: 'json_schema', schema: answerSchema } };

describe('POST /v1/messages: what the vendor receives', () => {
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.fundedKey({ balance: '20.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  /** Sends a body (200 expected) and returns the body and headers the simulator recorded for it. */
  async function forwarded(body: JsonRecord, headers: Record<string, string> = {}): Promise<{ json: JsonRecord; raw: string; headers: Record<string, string>; response: RawResponse }> {
    const sent = gw.simulator.requests.length;
    const response = await postMessages(gw, body, { key, headers });
    assert.equal(response.status, 200, response.text);
    assert.equal(gw.simulator.requests.length, sent + 1, 'exactly one vendor request');
    const recorded = gw.simulator.lastRequest('/v1/messages');
    assert.ok(recorded);
    return { json: asRecord(recorded.json), raw: recorded.body, headers: recorded.headers, response };
  }

  test('metadata.user_id is replaced by a stable hash: same input same hash, different input different, never the original', async () => {
    const userIdOf = async (userId: string): Promise<string> => {
      const { json } = await forwarded(base({ metadata: { user_id: userId } }));
      const metadata = asRecord(json.metadata);
      assert.deepEqual(Object.keys(metadata), ['user_id']);
      assert.equal(typeof metadata.user_id, 'string');
      return metadata.user_id as string;
    };
    const first = await userIdOf('customer-42@example.com');
    const again = await userIdOf('customer-42@example.com');
    const other = await userIdOf('customer-43@example.com');
    assert.equal(first, again);
    assert.notEqual(first, other);
    for (const [hash, original] of [[first, 'customer-42@example.com'], [other, 'customer-43@example.com']] as const) {
      assert.notEqual(hash, original);
      assert.ok(!hash.includes('customer-4'), `the hash does not reveal the original: ${hash}`);
      assert.ok(hash.length >= 16, `a hash, not a truncation: ${hash}`);
    }
  });

  test('any other metadata key is refused with 400 in shape B naming the key, and nothing is forwarded', async () => {
    const sent = gw.simulator.requests.length;
    const response = await postMessages(gw, base({ metadata: { user_id: 'u1', tenant_email: 'x@example.com' } }), { key });
    assert.equal(response.status, 400);
    const error = errorB(response.json);
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /tenant_email/);
    assert.equal(gw.simulator.requests.length, sent);
  });

  test('service_tier is removed', async () => {
    const { json } = await forwarded(base({ service_tier: 'auto', temperature: 1 }));
    assert.ok(!('service_tier' in json));
    assert.equal(json.temperature, 1);
  });

  test('context_management: clear_thinking edits are removed when thinking is absent, the other edits stay', async () => {
    const { json } = await forwarded(base({ context_management: { edits: [clearThinking, clearToolUses] } }), { 'anthropic-beta': 'context-management-2025-06-27' });
    assert.deepEqual(json.context_management, { edits: [clearToolUses] });
  });

  test('context_management: removed as a whole when thinking is disabled and no other edit remains', async () => {
    const { json } = await forwarded(base({ thinking: { type: 'disabled' }, context_management: { edits: [clearThinking] } }));
    assert.ok(!('context_management' in json), JSON.stringify(json.context_management));
    assert.deepEqual(json.thinking, { type: 'disabled' });
  });

  test('context_management: kept unchanged when thinking is enabled', async () => {
    const management = { edits: [clearThinking, clearToolUses] };
    const { json } = await forwarded(base({ thinking: enabledThinking, context_management: management }));
    assert.deepEqual(json.context_management, management);
    assert.deepEqual(json.thinking, enabledThinking);
  });

  test('small-tier model: adaptive thinking and output_config are removed; enabled thinking stays', async () => {
    const adaptive = await forwarded(base({ model: HAIKU, thinking: { type: 'adaptive' }, output_config: outputConfig }));
    assert.equal(adaptive.json.model, HAIKU_UPSTREAM);
    assert.ok(!('thinking' in adaptive.json));
    assert.ok(!('output_config' in adaptive.json));
    const enabled = await forwarded(base({ model: HAIKU, thinking: enabledThinking }));
    assert.deepEqual(enabled.json.thinking, enabledThinking);
  });

  test('small-tier model with adaptive thinking: its clear_thinking edits go with the thinking that is removed', async () => {
    const { json } = await forwarded(base({ model: HAIKU, thinking: { type: 'adaptive' }, context_management: { edits: [clearThinking] } }));
    assert.ok(!('thinking' in json));
    assert.ok(!('context_management' in json), `thinking is off at the vendor, so no clear_thinking edit may remain: ${JSON.stringify(json.context_management)}`);
  });

  test('standard model: adaptive thinking and output_config are forwarded as sent, the schema byte-equal', async () => {
    const { json, raw, response } = await forwarded(base({ thinking: { type: 'adaptive', display: 'omitted' }, output_config: outputConfig }));
    assert.deepEqual(json.thinking, { type: 'adaptive', display: 'omitted' });
    assert.equal(JSON.stringify(json.output_config), JSON.stringify(outputConfig));
    assert.ok(raw.includes(JSON.stringify(answerSchema)), 'the schema bytes reached the vendor unchanged');
    assert.deepEqual(valuesOfKey(json.output_config, 'additionalProperties'), []);
    const text = (asRecord(response.json).content as JsonRecord[]).find((block) => block.type === 'text')?.text;
    assert.deepEqual(JSON.parse(String(text)), sampleFromSchema(answerSchema), 'the structured answer follows the schema as sent');
  });

  test('anthropic-beta: code-execution values are removed, the others forwarded', async () => {
    const both = await forwarded(base(), { 'anthropic-beta': 'code-execution-2025-08-25,interleaved-thinking-2025-05-14' });
    assert.equal(both.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
    const only = await forwarded(base(), { 'anthropic-beta': 'code-execution-2025-05-22' });
    assert.equal(only.headers['anthropic-beta'], undefined);
  });

  test('partner-version and partner-beta are accepted and forwarded as anthropic-version and anthropic-beta', async () => {
    const { headers } = await forwarded(base(), { 'partner-version': '2023-06-01', 'partner-beta': 'code-execution-2025-08-25, fine-grained-tool-streaming-2025-05-14' });
    assert.equal(headers['anthropic-version'], '2023-06-01');
    assert.equal(headers['anthropic-beta'], 'fine-grained-tool-streaming-2025-05-14');
    assert.equal(headers['partner-version'], undefined);
    assert.equal(headers['partner-beta'], undefined);
  });

  test('anthropic-version is forwarded unchanged', async () => {
    for (const version of ['2023-06-01', '2026-10-21']) {
      const { headers } = await forwarded(base(), { 'anthropic-version': version });
      assert.equal(headers['anthropic-version'], version);
    }
  });

  test('the [1m] suffix is stripped from the model id', async () => {
    const { json } = await forwarded(base({ model: `${SONNET}[1m]` }));
    assert.equal(json.model, SONNET_UPSTREAM);
    const dated = await forwarded(base({ model: `${SONNET_UPSTREAM}[1m]` }));
    assert.equal(dated.json.model, SONNET_UPSTREAM);
  });

  test('routing fields provider, route, models, transforms, preset and plugins are removed', async () => {
    const routing = { provider: { order: ['anthropic'] }, route: 'fallback', models: [SONNET, HAIKU], transforms: ['middle-out'], preset: 'fast', plugins: [{ id: 'web' }] };
    const { json } = await forwarded(base(routing));
    for (const field of Object.keys(routing)) assert.ok(!(field in json), `${field} is not forwarded`);
    assert.deepEqual(json, { ...base(), model: SONNET_UPSTREAM });
  });

  test('vendor tools web_search, web_fetch, computer, bash and text_editor pass unchanged', async () => {
    const tools = [
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3, allowed_domains: ['example.com'] },
      { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 },
      { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
    ];
    const { json } = await forwarded(base({ tools }), { 'anthropic-beta': 'computer-use-2025-01-24' });
    assert.deepEqual(json.tools, tools);
  });

  test('nothing else is removed: a body with many vendor fields arrives equal except the listed changes', async () => {
    const body: JsonRecord = {
      model: SONNET,
      max_tokens: 4096,
      system: [{ type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look at this' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }] },
        { role: 'assistant', content: [{ type: 'text', text: 'I see a picture.' }] },
        { role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Report body' }, title: 'Report' }, { type: 'text', text: 'Summarise it', cache_control: { type: 'ephemeral' } }] },
      ],
      metadata: { user_id: 'end-user-7' },
      stop_sequences: ['\n\nHuman:'],
      temperature: 1,
      top_p: 0.999,
      tools: [{ name: 'lookup', description: 'Looks things up', input_schema: { type: 'object', properties: { q: { type: 'string' } } }, strict: true }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      thinking: { type: 'enabled', budget_tokens: 2048, display: 'summarized' },
      output_config: { effort: 'medium' },
      service_tier: 'standard_only',
      context_management: { edits: [clearThinking, clearToolUses] },
      mcp_servers: [],
      inference_geo: 'us',
      speed: 'standard',
      stream: false,
    };
    const { json, headers } = await forwarded(body, { 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27', 'anthropic-version': '2023-06-01' });
    const { service_tier: _removed, metadata: _hashed, ...kept } = body;
    const { metadata, ...rest } = json;
    assert.deepEqual(rest, { ...kept, model: SONNET_UPSTREAM });
    assert.notEqual(asRecord(metadata).user_id, 'end-user-7');
    assert.equal(headers['anthropic-beta'], 'interleaved-thinking-2025-05-14,context-management-2025-06-27');
    assert.equal(headers['anthropic-version'], '2023-06-01');
  });
});
