import type { RequestLogRow } from '../src/features/usage/request-log.ts';
import { SqlRequestLogRepository } from '../src/storage/request-log-repository.ts';
import type { TestGateway } from '../test/helpers/gateway.ts';

const BATCH = 5_000;
const MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
const ENDPOINTS = ['chat.completions', 'messages', 'embeddings'];

/** Writes `count` request-log rows (and their rollups) for one user, spread over the `days` before the gateway's now. */
export async function seedRequestLog(gateway: TestGateway, userId: string, keys: readonly string[], count: number, days: number): Promise<void> {
  const repository = new SqlRequestLogRepository(gateway.storage.db, gateway.storage.sqlite);
  const end = gateway.clock.now();
  await gateway.app.services.requestLog.maintain(true);
  for (let start = 0; start < count; start += BATCH) {
    const rows: RequestLogRow[] = [];
    for (let index = start; index < Math.min(count, start + BATCH); index += 1) {
      const created = end - Math.floor((index / count) * days * 86_400_000);
      rows.push({
        id: `req_bench${index.toString().padStart(8, '0')}`,
        created,
        account: { type: 'user', id: userId },
        keyId: keys[index % keys.length]!,
        userId,
        orgId: null,
        endpoint: ENDPOINTS[index % ENDPOINTS.length]!,
        model: MODELS[index % MODELS.length]!,
        servedModel: MODELS[index % MODELS.length]!,
        provider: 'openai',
        channel: null,
        attempts: 1,
        stream: index % 2 === 0,
        status: index % 50 === 0 ? 502 : 200,
        errorType: index % 50 === 0 ? 'upstream_error' : null,
        inputTokens: 120,
        outputTokens: 80,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        cost: 123_456n,
        latencyMs: 300,
        ttftMs: 40,
        taskId: null,
      });
    }
    await repository.append(rows);
  }
}
