import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { replyText, toolResultReplyText } from '../../simulator/server.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { charges, ledger } from '../helpers/e2e.ts';
import {
  assertBilledOncePerCall,
  CLAUDE_MODEL,
  freshAccount,
  OPENAI_MODEL,
  requestLog,
  settle,
  WEATHER_ARGUMENTS,
  WEATHER_RESULT,
  WEATHER_TOOL,
  type CompatAccount,
} from '../helpers/client-compat.ts';

/**
 * The official `@anthropic-ai/sdk` against Tollgate, set up as the README says: `new Anthropic({ apiKey, baseURL })` with the
 * gateway's root URL (the SDK adds `/v1/messages`). `/v1/messages` serves Claude models only (SPEC 4.2, 404 for a model of
 * another family), so the SDK is tried on Claude and shown the 404 for an OpenAI model.
 */

const PROMPT = 'Say hello to the compatibility suite';
const TOOL_PROMPT = 'What is the weather in Paris?';
const model = CLAUDE_MODEL;

describe('@anthropic-ai/sdk through Tollgate', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway?.close();
  });

  const client = (account: CompatAccount): Anthropic =>
    new Anthropic({ apiKey: account.key, baseURL: gateway.url, fetch: account.fetch, maxRetries: 0, timeout: 20_000 });
  const tools: Tool[] = [{ name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, input_schema: { ...WEATHER_TOOL.parameters } }];

  test('messages.create: the simulated answer, charged once, logged with tokens', async () => {
    const account = await freshAccount(gateway);
    const message = await client(account).messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] });
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(message.content.map((block) => block.type === 'text' ? block.text : block.type), [replyText(PROMPT, 16)]);
    assert.ok(message.usage.input_tokens > 0 && message.usage.output_tokens > 0);
    await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'messages', model, stream: false });
  });

  test('messages.stream: text events add up to the answer, finalMessage has usage; charged once', async () => {
    const account = await freshAccount(gateway);
    const stream = client(account).messages.stream({ model, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] });
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    const final = await stream.finalMessage();
    assert.equal(text, replyText(PROMPT, 16));
    assert.equal(final.stop_reason, 'end_turn');
    assert.ok(final.usage.output_tokens > 0);
    await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'messages', model, stream: true });
  });

  test('tool use: a tool_use block, the client sends tool_result, the model answers; two calls, two charges', async () => {
    const account = await freshAccount(gateway);
    const anthropic = client(account);
    const messages: MessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    const first = await anthropic.messages.create({ model, max_tokens: 256, messages, tools });
    assert.equal(first.stop_reason, 'tool_use');
    const use = first.content.find((block) => block.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', `a tool_use block: ${JSON.stringify(first.content)}`);
    assert.equal(use.name, WEATHER_TOOL.name);
    assert.deepEqual(use.input, WEATHER_ARGUMENTS);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: WEATHER_RESULT }] });
    const second = await anthropic.messages.create({ model, max_tokens: 256, messages, tools });
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content.map((block) => block.type === 'text' ? block.text : block.type), [toolResultReplyText(WEATHER_RESULT)]);
    await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'messages', model, stream: false });
  });

  test('streamed tool use: input_json deltas assemble the input; the streamed answer to the result; two charges', async () => {
    const account = await freshAccount(gateway);
    const anthropic = client(account);
    const messages: MessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    const first = await anthropic.messages.stream({ model, max_tokens: 256, messages, tools }).finalMessage();
    const use = first.content.find((block) => block.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', `a tool_use block: ${JSON.stringify(first.content)}`);
    assert.deepEqual(use.input, WEATHER_ARGUMENTS);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: WEATHER_RESULT }] });
    const answer = await anthropic.messages.stream({ model, max_tokens: 256, messages, tools }).finalText();
    assert.equal(answer, toolResultReplyText(WEATHER_RESULT));
    await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'messages', model, stream: true });
  });

  test('messages.countTokens: an input token count, free (logged, never charged)', async () => {
    const account = await freshAccount(gateway);
    const counted = await client(account).messages.countTokens({ model, messages: [{ role: 'user', content: PROMPT }], tools });
    assert.ok(counted.input_tokens > 0, `a count: ${JSON.stringify(counted)}`);
    assert.deepEqual(account.fetch.calls.map((call) => [call.path, call.status]), [['/v1/messages/count_tokens', 200]]);
    await settle(gateway);
    assert.deepEqual(charges(await ledger(gateway, { userId: account.userId })), [], 'counting tokens costs nothing');
    const rows = await requestLog(gateway, account.userId);
    assert.deepEqual(rows.map((row) => [row.id, row.endpoint, Number(row.cost)]), [[account.fetch.calls[0]!.requestId, 'messages.count_tokens', 0]]);
  });

  // Claude Code is not installed here; it is this SDK underneath, configured by ANTHROPIC_BASE_URL (the gateway's root) and
  // ANTHROPIC_AUTH_TOKEN (sent as `Authorization: Bearer`), calling the beta messages API (`?beta=true`, an `anthropic-beta`
  // header) with streaming and tools, on its default model ids (catalog/README.md): claude-opus-4-8 for the conversation,
  // claude-haiku-4-5-20251001 for background tasks.
  const claudeCodeClient = (account: CompatAccount): Anthropic =>
    new Anthropic({ apiKey: null, authToken: account.key, baseURL: gateway.url, fetch: account.fetch, maxRetries: 0, timeout: 20_000 });
  const asClaudeCode = { query: { beta: 'true' } }; // Claude Code's bundled SDK adds ?beta=true to beta calls; this one does not

  test('Claude Code\'s wire: a bearer token, beta.messages (?beta=true, anthropic-beta) streamed with a tool round trip on its default model; two charges', async () => {
    const account = await freshAccount(gateway);
    const claudeCode = claudeCodeClient(account);
    const betas = ['claude-code-20250219', 'fine-grained-tool-streaming-2025-05-14'];
    const model = 'claude-opus-4-8';
    const messages: Anthropic.Beta.BetaMessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
    const first = await claudeCode.beta.messages.stream({ model, max_tokens: 1024, messages, tools, betas }, asClaudeCode).finalMessage();
    const use = first.content.find((block) => block.type === 'tool_use');
    assert.ok(use && use.type === 'tool_use', `a tool_use block: ${JSON.stringify(first.content)}`);
    messages.push({ role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: WEATHER_RESULT }] });
    const answer = await claudeCode.beta.messages.stream({ model, max_tokens: 1024, messages, tools, betas }, asClaudeCode).finalMessage();
    assert.deepEqual(answer.content.map((block) => (block.type === 'text' ? block.text : block.type)), [toolResultReplyText(WEATHER_RESULT)]);
    assert.deepEqual(account.fetch.calls.map((call) => call.path), ['/v1/messages?beta=true', '/v1/messages?beta=true']);
    assert.equal(gateway.simulator.lastRequest('/v1/messages')?.headers['anthropic-beta'], betas.join(','), 'the beta flags reach the vendor');
    await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'messages', model, stream: true });
  });

  test('Claude Code\'s background call on claude-haiku-4-5-20251001 (bearer, ?beta=true): answered and charged once', async () => {
    const account = await freshAccount(gateway);
    const model = 'claude-haiku-4-5-20251001';
    const message = await claudeCodeClient(account).beta.messages.create(
      { model, max_tokens: 512, messages: [{ role: 'user', content: PROMPT }], betas: ['claude-code-20250219'] },
      asClaudeCode,
    );
    assert.deepEqual(message.content.map((block) => (block.type === 'text' ? block.text : block.type)), [replyText(PROMPT, 16)]);
    await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'messages', model, stream: false });
  });

  test(`an OpenAI model on /v1/messages is the SDK's NotFoundError (404 not_found_error), not charged`, async () => {
    const account = await freshAccount(gateway);
    await assert.rejects(
      client(account).messages.create({ model: OPENAI_MODEL, max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }),
      (error: unknown) => error instanceof Anthropic.NotFoundError && error.status === 404 && (error.error as { error?: { type?: string } }).error?.type === 'not_found_error',
    );
    await settle(gateway);
    assert.deepEqual(charges(await ledger(gateway, { userId: account.userId })), []);
  });
});
