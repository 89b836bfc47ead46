import type { JsonObject } from '../../core/chat-types.ts';
import type { Toolset, ToolDefinition } from '../assistants/tools/toolset.ts';

/** Client phrases that ask for a person, in the languages the bot meets most. */
// Built from strings so that the bundle, which escapes non-ASCII in strings but not in regular-expression literals, stays
// ASCII: V8 keeps a module's source as a string, one byte a character only when all of it is ASCII.
const ASKS_FOR_HUMAN = new RegExp(['\\b(operator|human|real person|live agent|agent please|talk to (a|an) (person|agent|human)|manager)\\b', 'оператор', 'человек', 'менеджер', 'живой'].join('|'), 'i');

export const asksForHuman = (text: string): boolean => ASKS_FOR_HUMAN.test(text);

export const INVITE_AGENT_TOOL = 'invite_agent';

/**
 * The tool that lets the assistant hand the dialog to a human operator (offered only while operators are online).
 * Calling it records the decision; the reply worker sends INVITE_AGENT after the turn.
 */
export class HandOverToolset implements Toolset {
  requested = false;
  reason = '';
  readonly definitions: readonly ToolDefinition[] = [
    {
      name: INVITE_AGENT_TOOL,
      description: 'Hand this conversation to a human operator when the client needs a person or you cannot help.',
      parameters: { type: 'object', properties: { reason: { type: 'string', description: 'Why a human is needed' } }, required: ['reason'] },
    },
  ];

  async call(_name: string, args: JsonObject): Promise<string> {
    this.requested = true;
    this.reason = typeof args.reason === 'string' ? args.reason : '';
    return 'An operator has been invited to the chat. Tell the client briefly that an operator will join shortly.';
  }

  async close(): Promise<void> {}
}
