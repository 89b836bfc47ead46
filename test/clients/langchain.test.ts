import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, ToolMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
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
 * LangChain's chat models against Tollgate, set up as the README says: `ChatOpenAI({ model, apiKey, configuration: { baseURL } })`
 * on chat completions and with `useResponsesApi: true`, and `ChatAnthropic({ model, apiKey, anthropicApiUrl })` (messages;
 * Claude only). invoke, stream, and a tool round trip (bindTools, run the tool, send a ToolMessage, get the answer).
 */

const PROMPT = 'Say hello to the compatibility suite';
const TOOL_PROMPT = 'What is the weather in Paris?';

interface ModelCase {
  name: string;
  endpoint: string;
  models: string[];
  chat(account: CompatAccount, gatewayUrl: string, id: string): BaseChatModel;
  needsResponses?: boolean;
}

const CASES: ModelCase[] = [
  {
    name: 'ChatOpenAI (chat completions)',
    endpoint: 'chat.completions',
    models: [OPENAI_MODEL, CLAUDE_MODEL],
    chat: (account, url, id) => new ChatOpenAI({ model: id, apiKey: account.key, configuration: { baseURL: `${url}/v1`, fetch: account.fetch }, maxRetries: 0 }),
  },
  {
    name: 'ChatOpenAI useResponsesApi',
    endpoint: 'responses',
    models: [OPENAI_MODEL, CLAUDE_MODEL],
    chat: (account, url, id) =>
      new ChatOpenAI({ model: id, apiKey: account.key, useResponsesApi: true, configuration: { baseURL: `${url}/v1`, fetch: account.fetch }, maxRetries: 0 }),
    needsResponses: true,
  },
  {
    name: 'ChatAnthropic',
    endpoint: 'messages',
    models: [CLAUDE_MODEL],
    chat: (account, url, id) => new ChatAnthropic({ model: id, apiKey: account.key, anthropicApiUrl: url, clientOptions: { fetch: account.fetch }, maxRetries: 0 }),
  },
];

/** The text of a LangChain message: its string content, or its text parts joined. */
function textOf(message: BaseMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : '')).join('');
}

describe('LangChain through Tollgate', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(async () => {
    await gateway?.close();
  });

  for (const item of CASES) {
    for (const id of item.models) {
      describe(`${item.name} on ${id}${item.needsResponses ? ' (needs /v1/responses)' : ''}`, () => {
        const billing = (stream: boolean, calls = 1) => ({ calls, endpoint: item.endpoint, model: id, stream });

        test('invoke: the simulated answer with usage metadata; charged once', async () => {
          const account = await freshAccount(gateway);
          const answer = await item.chat(account, gateway.url, id).invoke([new HumanMessage(PROMPT)]);
          assert.equal(textOf(answer), replyText(PROMPT, 16));
          assert.equal(answer.type, 'ai');
          const usage = (answer as { usage_metadata?: { input_tokens: number; output_tokens: number } }).usage_metadata;
          assert.ok(usage && usage.input_tokens > 0 && usage.output_tokens > 0, `usage_metadata: ${JSON.stringify(usage)}`);
          await assertBilledOncePerCall(gateway, account, billing(false));
        });

        test('stream: the chunks concatenate to the answer; charged once', async () => {
          const account = await freshAccount(gateway);
          let whole: AIMessageChunk | undefined;
          for await (const chunk of await item.chat(account, gateway.url, id).stream([new HumanMessage(PROMPT)])) whole = whole ? whole.concat(chunk) : chunk;
          assert.ok(whole);
          assert.equal(textOf(whole), replyText(PROMPT, 16));
          assert.ok((whole.usage_metadata?.output_tokens ?? 0) > 0, `streamed usage: ${JSON.stringify(whole.usage_metadata)}`);
          await assertBilledOncePerCall(gateway, account, billing(true));
        });

        test('tool call: bindTools, the model calls get_weather, a ToolMessage with the result, the answer; two charges', async () => {
          const account = await freshAccount(gateway);
          const executed: unknown[] = [];
          const weather = tool(
            async (input: { city: string }) => {
              executed.push(input);
              return WEATHER_RESULT;
            },
            { name: WEATHER_TOOL.name, description: WEATHER_TOOL.description, schema: z.object({ city: z.string() }) },
          );
          const model = item.chat(account, gateway.url, id).bindTools!([weather]);
          const messages: BaseMessage[] = [new HumanMessage(TOOL_PROMPT)];
          const first = await model.invoke(messages);
          const calls = first.tool_calls ?? [];
          assert.deepEqual(calls.map((call) => [call.name, call.args]), [[WEATHER_TOOL.name, WEATHER_ARGUMENTS]]);
          const output = await weather.invoke(calls[0]!.args as { city: string });
          messages.push(first, new ToolMessage({ tool_call_id: calls[0]!.id!, content: output }));
          assert.deepEqual(executed, [WEATHER_ARGUMENTS]);
          const second = await model.invoke(messages);
          assert.equal(textOf(second), toolResultReplyText(WEATHER_RESULT));
          await assertBilledOncePerCall(gateway, account, billing(false, 2));
        });
      });
    }
  }
});
