import type { RequestLogRow } from '../../src/features/usage/request-log.ts';

/** A chat call's request-log row for user usr_1 (1,500 nano-units, 10 + 5 tokens): repository-level tests. */
export const logRow = (id: string, created: number, keyId = 'key_a'): RequestLogRow => ({
  id,
  created,
  account: { type: 'user', id: 'usr_1' },
  keyId,
  userId: 'usr_1',
  orgId: null,
  endpoint: 'chat.completions',
  model: 'gpt-4o-mini',
  servedModel: 'gpt-4o-mini',
  provider: 'openai',
  channel: 'default',
  attempts: 1,
  stream: false,
  status: 200,
  errorType: null,
  inputTokens: 10,
  outputTokens: 5,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  cost: 1_500n,
  latencyMs: 3,
  ttftMs: null,
  taskId: null,
});
