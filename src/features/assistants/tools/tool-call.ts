import type { JsonObject } from '../../../core/chat-types.ts';
import type { ToolContext, Toolset } from './toolset.ts';

/**
 * Runs one tool call with a time limit. At the limit the call's signal is aborted, so the toolset stops its work (closes
 * the HTTP request, kills the SQL child, abandons the embedding) instead of running on unseen, and the model is told
 * the tool did not answer. A toolset that ignores its signal cannot hold the chat beyond the limit either.
 */
export async function callToolWithTimeout(toolset: Toolset, name: string, args: JsonObject, context: ToolContext, timeoutMs: number): Promise<string> {
  const timeout = new AbortController();
  const timedOut = new Promise<string>((resolve) => {
    timeout.signal.addEventListener('abort', () => resolve(`Error: the tool ${name} did not answer within ${timeoutMs / 1000} s.`), { once: true });
  });
  const timer = setTimeout(() => timeout.abort(), timeoutMs);
  try {
    return await Promise.race([toolset.call(name, args, { ...context, signal: AbortSignal.any([context.signal, timeout.signal]) }), timedOut]);
  } catch (error) {
    return `Error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    clearTimeout(timer);
  }
}
