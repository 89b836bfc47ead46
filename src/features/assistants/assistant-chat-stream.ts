import type { AssistantChatService, ChatTurn } from './assistant-chat.ts';

/** What a streamed assistant turn produces (SPEC 4.3): text as it is written, then the whole response, or the error that ended it. */
export type AssistantStreamEvent =
  | { type: 'delta'; text: string }
  | { type: 'response'; response: Record<string, unknown> }
  | { type: 'error'; error: unknown };

/**
 * Runs a turn with streaming and yields its events in order. The turn runs on its own (tool rounds included); the
 * generator only hands out what it produced. A consumer that stops early (client gone) does not stop the turn: the turn's
 * own abort signal does (the route aborts it), and the charge is booked by `run` either way.
 */
export async function* streamTurn(chat: AssistantChatService, turn: ChatTurn): AsyncGenerator<AssistantStreamEvent> {
  const queue: AssistantStreamEvent[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const push = (event: AssistantStreamEvent): void => {
    queue.push(event);
    wake?.();
  };
  void chat
    .run(turn, (text) => push({ type: 'delta', text }))
    .then((response) => push({ type: 'response', response }))
    .catch((error: unknown) => push({ type: 'error', error }))
    .finally(() => {
      finished = true;
      wake?.();
    });
  for (;;) {
    while (queue.length > 0) yield queue.shift()!;
    if (finished) return;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
}
