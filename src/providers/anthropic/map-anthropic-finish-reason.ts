/** OpenAI's `finish_reason` values an Anthropic answer can end with. */
export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/**
 * Anthropic `stop_reason` → OpenAI `finish_reason` (PROTOCOLS §1.7, §2.1). `pause_turn` (a server tool needs another
 * turn) has no OpenAI counterpart; the turn did end normally, so it is `stop`. Unknown future reasons are `stop` too.
 */
export function mapAnthropicFinishReason(reason: string | null | undefined): ChatFinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}
