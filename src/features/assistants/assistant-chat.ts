import type { ChatMessage, ChatRequest, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { newId } from '../../lib/ids.ts';
import { priceUsage } from '../billing/pricing.ts';
import { estimateUsage } from '../inference/chat-completions.ts';
import { prepareModelCall, type Caller, type ModelCall, type ModelCallDependencies } from '../inference/model-call.ts';
import { tokenUsageFromChat } from '../inference/usage.ts';
import type { Assistant, AssistantsRepository } from './assistant.ts';
import type { AssistantsService } from './assistants-service.ts';
import { ChatCharges } from './chat-charges.ts';
import { callToolWithTimeout } from './tools/tool-call.ts';
import type { ToolContext, Toolset, ToolsetFactory } from './tools/toolset.ts';

/** Tool rounds per message before the model must answer in words. */
const MAX_ROUNDS = 6;
/** A tool that takes longer than this is aborted and answers the model with an error. */
const TOOL_TIMEOUT_MS = 20_000;

export interface AssistantChatInput {
  chatId: string;
  assistantCode: string;
  message: string;
  maxContext: number;
  images: string[];
  useWalletBalance: boolean;
}

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

interface RoundResult {
  content: string;
  toolCalls: ToolCall[];
}

/** One prepared chat turn: the assistant, the model call, the conversation so far and the open toolsets. */
export interface ChatTurn {
  caller: Caller;
  input: AssistantChatInput;
  assistant: Assistant;
  call: ModelCall;
  messages: ChatMessage[];
  contextMessages: number;
  toolsets: Toolset[];
  charges: ChatCharges;
  abort: AbortController;
}

/**
 * POST /v1/assistant/chat: an assistant's reply in a chat with memory. The model sees the instruction (plus knowledge
 * retrieved for `always` bases), the last `maxContext` messages of this chat and the new message; it may call the
 * assistant's tools for up to MAX_ROUNDS rounds. All rounds and tool costs are charged as one ledger entry.
 */
export class AssistantChatService {
  constructor(
    private readonly dependencies: ModelCallDependencies,
    private readonly assistants: AssistantsService,
    private readonly repository: AssistantsRepository,
    private readonly factories: readonly ToolsetFactory[],
  ) {}

  /** `extra` toolsets come after the assistant's own (the chat-bot adds its hand-over tool); `note` is appended to the instruction. */
  async prepare(caller: Caller, input: AssistantChatInput, extra: readonly Toolset[] = [], note = ''): Promise<ChatTurn> {
    const assistant = await this.assistants.forChat(caller, input.assistantCode);
    const call = await prepareModelCall(this.dependencies, caller, { model: assistant.modelId, endpoint: 'assistant.chat', kinds: ['chat'], useWalletBalance: input.useWalletBalance });
    if (input.images.length > 0 && !call.resolution.served.vision) throw invalidParam('images', `the assistant's model '${assistant.modelId}' does not accept images`);
    const history = await this.repository.recentMessages(caller.key.userId, input.chatId, input.maxContext);
    const toolsets: Toolset[] = [];
    for (const factory of this.factories) {
      const toolset = await factory.open(assistant, caller);
      if (toolset) toolsets.push(toolset);
    }
    toolsets.push(...extra);
    const turn: ChatTurn = { caller, input, assistant, call, messages: [], contextMessages: history.length, toolsets, charges: new ChatCharges(), abort: new AbortController() };
    const context = this.toolContext(turn);
    const extraContext: string[] = [];
    for (const toolset of toolsets) {
      const text = await toolset.systemContext?.(context);
      if (text) extraContext.push(text);
    }
    const system = [assistant.instruction, note, ...extraContext].filter(Boolean).join('\n\n');
    const user: ChatMessage =
      input.images.length > 0
        ? { role: 'user', content: [{ type: 'text', text: input.message }, ...input.images.map((url) => ({ type: 'image_url', image_url: { url } }))] }
        : { role: 'user', content: input.message };
    turn.messages = [...(system ? [{ role: 'system' as const, content: system }] : []), ...history.map((item) => ({ role: item.role, content: item.content })), user];
    return turn;
  }

  private toolContext(turn: ChatTurn): ToolContext {
    return { caller: turn.caller, assistant: turn.assistant, chatId: turn.input.chatId, message: turn.input.message, charges: turn.charges, signal: turn.abort.signal };
  }

  private request(turn: ChatTurn, stream: boolean): ChatRequest {
    const tools = turn.toolsets.flatMap((toolset) => toolset.definitions.map((definition) => ({ type: 'function', function: definition })));
    return {
      model: turn.call.resolution.served.upstreamModel,
      messages: turn.messages,
      temperature: Number(turn.assistant.temperature),
      ...(tools.length > 0 ? { tools } : {}),
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    };
  }

  private chargeRound(turn: ChatTurn, usage: ChatUsage | undefined, request: ChatRequest, produced: string): void {
    const tokens = tokenUsageFromChat(usage ?? estimateUsage(request, produced));
    turn.charges.addModelRound(tokens, priceUsage(turn.call.resolution.billed, tokens));
    // The request log's row counts the tokens of every model round of the turn (its cost comes from the one ledger entry).
    turn.caller.trace?.used(tokens);
  }

  private async roundOnce(turn: ChatTurn): Promise<RoundResult> {
    const request = this.request(turn, false);
    const response = await turn.call.provider.chatCompletion(request, { requestId: turn.caller.requestId, route: turn.call.route, signal: turn.abort.signal });
    const message = response.choices[0]?.message;
    const content = typeof message?.content === 'string' ? message.content : '';
    this.chargeRound(turn, response.usage, request, content);
    const toolCalls = ((message?.tool_calls as JsonObject[] | undefined) ?? []).map((call) => {
      const fn = (call.function ?? {}) as JsonObject;
      return { id: String(call.id), name: String(fn.name ?? ''), arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}' };
    });
    return { content, toolCalls };
  }

  private async roundStreamed(turn: ChatTurn, onDelta: (text: string) => void): Promise<RoundResult> {
    const request = this.request(turn, true);
    const stream = await turn.call.provider.chatCompletionStream(request, { requestId: turn.caller.requestId, route: turn.call.route, signal: turn.abort.signal });
    let content = '';
    let usage: ChatUsage | undefined;
    const calls = new Map<number, ToolCall>();
    try {
      for await (const event of stream) {
        if (event.kind === 'error') throw new GatewayError('upstream_error', `The model failed: ${JSON.stringify(event.error)}`);
        if (event.chunk.usage) usage = event.chunk.usage;
        for (const choice of event.chunk.choices ?? []) {
          const delta = choice.delta;
          if (typeof delta.content === 'string' && delta.content) {
            content += delta.content;
            onDelta(delta.content);
          }
          for (const piece of (delta.tool_calls as JsonObject[] | undefined) ?? []) {
            const index = Number(piece.index ?? 0);
            const fn = (piece.function ?? {}) as JsonObject;
            const current = calls.get(index) ?? { id: '', name: '', arguments: '' };
            if (typeof piece.id === 'string') current.id = piece.id;
            if (typeof fn.name === 'string') current.name += fn.name;
            if (typeof fn.arguments === 'string') current.arguments += fn.arguments;
            calls.set(index, current);
          }
        }
      }
    } finally {
      stream.close();
      this.chargeRound(turn, usage, request, content + [...calls.values()].map((call) => call.name + call.arguments).join(''));
    }
    return { content, toolCalls: [...calls.values()] };
  }

  private async runTool(turn: ChatTurn, call: ToolCall): Promise<string> {
    const toolset = turn.toolsets.find((candidate) => candidate.definitions.some((definition) => definition.name === call.name));
    if (!toolset) return `Error: there is no tool named ${call.name}.`;
    let args: JsonObject;
    try {
      const parsed = JSON.parse(call.arguments || '{}') as unknown;
      args = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as JsonObject) : {};
    } catch {
      return 'Error: the tool arguments were not valid JSON.';
    }
    return callToolWithTimeout(toolset, call.name, args, this.toolContext(turn), TOOL_TIMEOUT_MS);
  }

  /**
   * Runs the turn to the assistant's final answer. With `onDelta`, model output is streamed as it comes. The charge is
   * booked and the messages remembered even when the turn fails midway (what was produced is paid for).
   */
  async run(turn: ChatTurn, onDelta?: (text: string) => void): Promise<Record<string, unknown>> {
    let reply = '';
    try {
      for (let round = 1; ; round += 1) {
        const result = onDelta ? await this.roundStreamed(turn, onDelta) : await this.roundOnce(turn);
        if (result.toolCalls.length === 0 || round >= MAX_ROUNDS) {
          reply = result.content;
          break;
        }
        turn.messages.push({
          role: 'assistant',
          content: result.content || null,
          tool_calls: result.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments || '{}' } })),
        });
        for (const call of result.toolCalls) turn.messages.push({ role: 'tool', tool_call_id: call.id, content: await this.runTool(turn, call) });
      }
    } finally {
      await this.finish(turn, reply);
    }
    return {
      id: newId('chatCompletion'),
      chatId: turn.input.chatId,
      assistantId: turn.assistant.id,
      assistantCode: turn.assistant.mention,
      message: reply,
      model: turn.call.resolution.requested.id,
      usage: turn.charges.usage(turn.contextMessages),
      ...(turn.call.resolution.warning ? { warnings: [turn.call.resolution.warning] } : {}),
    };
  }

  private async finish(turn: ChatTurn, reply: string): Promise<void> {
    await Promise.allSettled(turn.toolsets.map((toolset) => toolset.close()));
    const total = turn.charges.total;
    if (total > 0n) {
      this.dependencies.book.record({
        account: turn.call.payer,
        amount: -total,
        kind: 'charge',
        requestId: turn.caller.requestId,
        keyId: turn.caller.key.id,
        model: turn.call.resolution.billed.id,
        description: `assistant.chat ${turn.assistant.mention}`,
      });
    }
    const at = this.dependencies.clock.now();
    const base = { chatId: turn.input.chatId, ownerId: turn.caller.key.userId, assistantId: turn.assistant.id, at };
    await this.repository.appendMessages([
      { ...base, id: newId('chatCompletion'), role: 'user', content: turn.input.message },
      ...(reply ? [{ ...base, id: newId('chatCompletion'), role: 'assistant' as const, content: reply }] : []),
    ]);
  }
}
