import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import type { FunctionTool, ResponseInputItem } from 'openai/resources/responses/responses';
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
 * The official `openai` package (Node) against Tollgate, configured as the README tells users: `new OpenAI({ apiKey, baseURL })`.
 * Chat completions and the Responses API on an OpenAI model and on a Claude model (translated by the gateway): a plain call, a
 * stream and a function-tool round trip; embeddings, moderations and the model list. Each call is charged once and logged.
 */

const PROMPT = 'Say hello to the compatibility suite';
const TOOL_PROMPT = 'What is the weather in Paris?';

describe('openai (Node SDK) through Tollgate', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway?.close();
  });

  /** The README's setup; `fetch` only counts the calls, `maxRetries: 0` keeps a failure from being retried into a pass. */
  const client = (account: CompatAccount): OpenAI =>
    new OpenAI({ apiKey: account.key, baseURL: `${gateway.url}/v1`, fetch: account.fetch, maxRetries: 0, timeout: 20_000 });

  const chatTools: ChatCompletionTool[] = [{ type: 'function', function: { ...WEATHER_TOOL, parameters: { ...WEATHER_TOOL.parameters } } }];
  const responseTools: FunctionTool[] = [{ type: 'function', ...WEATHER_TOOL, parameters: { ...WEATHER_TOOL.parameters }, strict: true }];

  for (const model of [OPENAI_MODEL, CLAUDE_MODEL]) {
    describe(`chat.completions on ${model}`, () => {
      test('plain call: the simulated answer, charged once, logged with tokens', async () => {
        const account = await freshAccount(gateway);
        const completion = await client(account).chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }] });
        assert.equal(completion.choices[0]?.message.content, replyText(PROMPT, 16));
        assert.ok(completion.model.startsWith(model), `the served model is named: ${completion.model}`);
        await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'chat.completions', model, stream: false });
      });

      test('streamed call: the deltas add up to the answer; charged once', async () => {
        const account = await freshAccount(gateway);
        const stream = await client(account).chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }], stream: true });
        let text = '';
        let finish: string | null | undefined;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? '';
          finish ??= chunk.choices[0]?.finish_reason;
        }
        assert.equal(text, replyText(PROMPT, 16));
        assert.equal(finish, 'stop');
        await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'chat.completions', model, stream: true });
      });

      test('tool call: the model calls get_weather, the client sends the result, the model answers; two calls, two charges', async () => {
        const account = await freshAccount(gateway);
        const openai = client(account);
        const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: TOOL_PROMPT }];
        const first = await openai.chat.completions.create({ model, messages, tools: chatTools });
        const message = first.choices[0]!.message;
        assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
        const call = message.tool_calls?.[0];
        assert.ok(call && call.type === 'function', `a function call: ${JSON.stringify(message)}`);
        assert.equal(call.function.name, WEATHER_TOOL.name);
        assert.deepEqual(JSON.parse(call.function.arguments), WEATHER_ARGUMENTS);
        messages.push(message, { role: 'tool', tool_call_id: call.id, content: WEATHER_RESULT });
        const second = await openai.chat.completions.create({ model, messages, tools: chatTools });
        assert.equal(second.choices[0]?.message.content, toolResultReplyText(WEATHER_RESULT));
        await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'chat.completions', model, stream: false });
      });

      test('streamed tool call through the SDK\'s runTools helper: it runs the function and streams the answer', async () => {
        const account = await freshAccount(gateway);
        const seen: unknown[] = [];
        const runner = client(account).chat.completions.runTools({
          model,
          messages: [{ role: 'user', content: TOOL_PROMPT }],
          stream: true,
          tools: [{
            type: 'function',
            function: { ...WEATHER_TOOL, parameters: { ...WEATHER_TOOL.parameters }, parse: JSON.parse, function: (args: unknown) => { seen.push(args); return WEATHER_RESULT; } },
          }],
        });
        assert.equal(await runner.finalContent(), toolResultReplyText(WEATHER_RESULT));
        assert.deepEqual(seen, [WEATHER_ARGUMENTS], 'the SDK ran the tool once with the model\'s arguments');
        await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'chat.completions', model, stream: true });
      });
    });

    // Needs the gateway's POST /v1/responses (DESIGN §12, branch h-responses) and, for OpenAI models, the simulator's Responses
    // endpoint (branch h-respsim). Written against the documented behaviour; fails until both land.
    describe(`responses on ${model}`, () => {
      test('plain call: output_text is the simulated answer; charged once', async () => {
        const account = await freshAccount(gateway);
        const response = await client(account).responses.create({ model, input: PROMPT });
        assert.equal(response.status, 'completed');
        assert.equal(response.output_text, replyText(PROMPT, 16));
        assert.ok((response.usage?.input_tokens ?? 0) > 0 && (response.usage?.output_tokens ?? 0) > 0, 'usage is reported');
        await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'responses', model, stream: false });
      });

      test('streamed call: text deltas add up to the answer, the stream ends with response.completed', async () => {
        const account = await freshAccount(gateway);
        const stream = await client(account).responses.create({ model, input: PROMPT, stream: true });
        let text = '';
        const types: string[] = [];
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === 'response.output_text.delta') text += event.delta;
        }
        assert.equal(text, replyText(PROMPT, 16));
        assert.equal(types[0], 'response.created');
        assert.equal(types.at(-1), 'response.completed');
        await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'responses', model, stream: true });
      });

      test('tool call: a function_call item, the client sends function_call_output, the model answers; two charges', async () => {
        const account = await freshAccount(gateway);
        const openai = client(account);
        const input: ResponseInputItem[] = [{ role: 'user', content: TOOL_PROMPT }];
        const first = await openai.responses.create({ model, input, tools: responseTools, store: false });
        const call = first.output.find((item) => item.type === 'function_call');
        assert.ok(call && call.type === 'function_call', `a function call: ${JSON.stringify(first.output)}`);
        assert.equal(call.name, WEATHER_TOOL.name);
        assert.deepEqual(JSON.parse(call.arguments), WEATHER_ARGUMENTS);
        input.push(call, { type: 'function_call_output', call_id: call.call_id, output: WEATHER_RESULT });
        const second = await openai.responses.create({ model, input, tools: responseTools, store: false });
        assert.equal(second.output_text, toolResultReplyText(WEATHER_RESULT));
        await assertBilledOncePerCall(gateway, account, { calls: 2, endpoint: 'responses', model, stream: false });
      });
    });
  }

  test('embeddings: one vector per input, charged once on input tokens', async () => {
    const account = await freshAccount(gateway);
    const result = await client(account).embeddings.create({ model: 'text-embedding-3-small', input: ['first text', 'second text'] });
    assert.equal(result.data.length, 2);
    assert.ok(result.data.every((item) => Array.isArray(item.embedding) && item.embedding.length > 0), 'float vectors (the SDK asks for base64 and decodes)');
    assert.ok(result.usage.prompt_tokens > 0);
    await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'embeddings', model: 'text-embedding-3-small', stream: false, outputTokens: false });
  });

  test('moderations: a result with the categories, charged once', async () => {
    const account = await freshAccount(gateway);
    const result = await client(account).moderations.create({ input: 'I want to be kind to everyone' });
    assert.equal(result.results.length, 1);
    assert.equal(result.results[0]!.flagged, false);
    assert.equal(typeof result.results[0]!.categories.violence, 'boolean');
    await assertBilledOncePerCall(gateway, account, { calls: 1, endpoint: 'moderations', model: 'text-moderation-latest', stream: false, outputTokens: false });
  });

  test('models: list pages through the catalog and retrieve reads one; free and not charged', async () => {
    const account = await freshAccount(gateway);
    const openai = client(account);
    const ids: string[] = [];
    for await (const model of openai.models.list()) ids.push(model.id);
    assert.ok(ids.includes(OPENAI_MODEL) && ids.includes(CLAUDE_MODEL), `both models are listed: ${ids.join(', ')}`);
    const one = await openai.models.retrieve(CLAUDE_MODEL);
    assert.equal(one.id, CLAUDE_MODEL);
    assert.equal(one.object, 'model');
    assert.ok(account.fetch.calls.every((call) => call.status === 200));
    await settle(gateway);
    assert.deepEqual(charges(await ledger(gateway, { userId: account.userId })), [], 'reading the catalog costs nothing');
    assert.ok((await requestLog(gateway, account.userId)).every((row) => row.cost === '0.00' || Number(row.cost) === 0));
  });
});
