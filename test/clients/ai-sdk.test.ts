import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { z } from 'zod';
import { replyText, toolResultReplyText } from '../../simulator/server.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import {
  assertBilledOncePerCall,
  CLAUDE_MODEL,
  freshAccount,
  OPENAI_MODEL,
  WEATHER_ARGUMENTS,
  WEATHER_RESULT,
  WEATHER_TOOL,
  type CompatAccount,
} from '../helpers/client-compat.ts';

/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/openai` and `@ai-sdk/anthropic`) against Tollgate, set up as the README says:
 * `createOpenAI({ baseURL: <gateway>/v1, apiKey })` — whose default model speaks the Responses API and whose `.chat(…)` speaks chat
 * completions — and `createAnthropic({ baseURL: <gateway>/v1, apiKey })` (messages; Claude models only, SPEC 4.2).
 * generateText and streamText, plain and with a tool the SDK executes (two model calls: the call, then the answer).
 */

const PROMPT = 'Say hello to the compatibility suite';
const TOOL_PROMPT = 'What is the weather in Paris?';

interface ProviderCase {
  name: string;
  /** Request-log endpoint the provider's calls land on. */
  endpoint: string;
  models: string[];
  model(account: CompatAccount, gatewayUrl: string, id: string): LanguageModel;
  /** Needs POST /v1/responses (DESIGN §12, branch h-responses): fails until it lands. */
  needsResponses?: boolean;
}

const openAiProvider = (account: CompatAccount, gatewayUrl: string) =>
  createOpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey: account.key, fetch: account.fetch });

const PROVIDERS: ProviderCase[] = [
  { name: '@ai-sdk/openai .chat()', endpoint: 'chat.completions', models: [OPENAI_MODEL, CLAUDE_MODEL], model: (account, url, id) => openAiProvider(account, url).chat(id) },
  { name: '@ai-sdk/openai default (Responses API)', endpoint: 'responses', models: [OPENAI_MODEL, CLAUDE_MODEL], model: (account, url, id) => openAiProvider(account, url)(id), needsResponses: true },
  {
    name: '@ai-sdk/anthropic',
    endpoint: 'messages',
    models: [CLAUDE_MODEL],
    model: (account, url, id) => createAnthropic({ baseURL: `${url}/v1`, apiKey: account.key, fetch: account.fetch })(id),
  },
];

describe('Vercel AI SDK through Tollgate', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway?.close();
  });

  /** The weather tool as AI SDK users write it; records what the SDK executed it with. */
  const weatherTool = (executed: unknown[]) =>
    tool({
      description: WEATHER_TOOL.description,
      inputSchema: z.object({ city: z.string() }),
      execute: async (input) => {
        executed.push(input);
        return WEATHER_RESULT;
      },
    });

  for (const provider of PROVIDERS) {
    for (const id of provider.models) {
      describe(`${provider.name} on ${id}${provider.needsResponses ? ' (needs /v1/responses)' : ''}`, () => {
        const billing = (stream: boolean, calls = 1) => ({ calls, endpoint: provider.endpoint, model: id, stream });

        test('generateText: the simulated answer; charged once', async () => {
          const account = await freshAccount(gateway);
          const result = await generateText({ model: provider.model(account, gateway.url, id), prompt: PROMPT, maxRetries: 0 });
          assert.equal(result.text, replyText(PROMPT, 16));
          assert.equal(result.finishReason, 'stop');
          assert.ok((result.usage.inputTokens ?? 0) > 0 && (result.usage.outputTokens ?? 0) > 0, `usage: ${JSON.stringify(result.usage)}`);
          await assertBilledOncePerCall(gateway, account, billing(false));
        });

        test('streamText: the streamed text is the answer; charged once', async () => {
          const account = await freshAccount(gateway);
          const errors: string[] = [];
          const result = streamText({ model: provider.model(account, gateway.url, id), prompt: PROMPT, maxRetries: 0, onError: ({ error }) => void errors.push(error instanceof Error ? error.message : String(error)) });
          let text = '';
          for await (const delta of result.textStream) text += delta;
          assert.deepEqual(errors, []);
          assert.equal(text, replyText(PROMPT, 16));
          assert.equal(await result.finishReason, 'stop');
          assert.ok(((await result.usage).outputTokens ?? 0) > 0);
          await assertBilledOncePerCall(gateway, account, billing(true));
        });

        test('generateText with a tool: the SDK runs get_weather, sends the result, gets the answer; two calls, two charges', async () => {
          const account = await freshAccount(gateway);
          const executed: unknown[] = [];
          const result = await generateText({
            model: provider.model(account, gateway.url, id),
            prompt: TOOL_PROMPT,
            tools: { [WEATHER_TOOL.name]: weatherTool(executed) },
            stopWhen: stepCountIs(2),
            maxRetries: 0,
          });
          assert.deepEqual(executed, [WEATHER_ARGUMENTS]);
          assert.equal(result.steps.length, 2);
          assert.deepEqual(result.steps[0]!.toolCalls.map((call) => [call.toolName, call.input]), [[WEATHER_TOOL.name, WEATHER_ARGUMENTS]]);
          assert.match(result.text, toolAnswer());
          await assertBilledOncePerCall(gateway, account, billing(false, 2));
        });

        test('streamText with a tool: the tool call and result stream, then the answer; two calls, two charges', async () => {
          const account = await freshAccount(gateway);
          const executed: unknown[] = [];
          const errors: string[] = [];
          const result = streamText({
            model: provider.model(account, gateway.url, id),
            prompt: TOOL_PROMPT,
            tools: { [WEATHER_TOOL.name]: weatherTool(executed) },
            stopWhen: stepCountIs(2),
            maxRetries: 0,
            onError: ({ error }) => void errors.push(error instanceof Error ? error.message : String(error)),
          });
          const parts: string[] = [];
          for await (const part of result.fullStream) parts.push(part.type);
          assert.deepEqual(errors, []);
          assert.deepEqual(executed, [WEATHER_ARGUMENTS]);
          assert.ok(parts.includes('tool-call') && parts.includes('tool-result'), `tool parts: ${parts.join(' ')}`);
          assert.match(await result.text, toolAnswer());
          await assertBilledOncePerCall(gateway, account, billing(true, 2));
        });
      });
    }
  }
});

/**
 * The simulator answers a tool result with `Tool result received: <first 60 chars of it>`; the AI SDK sends a string result as
 * the string itself or as its JSON (quoted), depending on the wire format.
 */
function toolAnswer(): RegExp {
  const plain = toolResultReplyText(WEATHER_RESULT);
  const quoted = toolResultReplyText(JSON.stringify(WEATHER_RESULT));
  return new RegExp(`^(${escape(plain)}|${escape(quoted)})$`);
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
