import type { Assistant } from '../../src/features/assistants/assistant.ts';
import type { ToolContext } from '../../src/features/assistants/tools/toolset.ts';
import { pino, type Logger } from 'pino';

/** An assistant as stored, with no tools unless `fields` add them (unit tests of toolsets). */
export function testAssistant(fields: Partial<Assistant> = {}): Assistant {
  return {
    id: 'asst_test0001',
    ownerId: 'user_test0001',
    mention: 'test-assistant',
    likes: 0,
    embedding: null,
    createdAt: 0,
    updatedAt: 0,
    title: 'Test',
    subtitle: '',
    description: '',
    picture: '',
    instruction: '',
    modelId: 'gpt-4o-mini',
    temperature: '0.5',
    sqlStore: false,
    access: { isPrivate: true, isFree: true, installPrice: '0', hideSettings: false, orgId: null },
    database: null,
    mcp: [],
    apiFunctions: [],
    ...fields,
  };
}

/** A tool context for direct toolset calls: the toolsets under test read only `signal` (test double). */
export function testToolContext(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal } as unknown as ToolContext;
}

export const silentLogger: Logger = pino({ level: 'silent' });
