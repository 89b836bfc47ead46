// `npm run bench:log [-- --postgres]` (DESIGN §13): 100,000 request-log rows for one account over 30 days, then the time of the
// first page of GET /api/v1/requests and of GET /api/v1/usage for the 30 days (target ≤ 100 ms each), through real HTTP.

import { performance } from 'node:perf_hooks';
import type { RequestLogRow } from '../src/features/usage/request-log.ts';
import { SqlRequestLogRepository } from '../src/storage/request-log-repository.ts';
import { startTestGateway } from '../test/helpers/gateway.ts';
import { managementKey } from '../test/helpers/management.ts';

const ROWS = 100_000;
const BATCH = 5_000;
const DAYS = 30;
const MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'claude-sonnet-4-5', 'claude-haiku-4-5'];
const ENDPOINTS = ['chat.completions', 'messages', 'embeddings'];

const database = process.argv.includes('--postgres') ? 'postgres' : 'sqlite';
const gateway = await startTestGateway({ database, config: { requestLog: true } });
try {
  const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'heavy user', balance: '100' });
  const keys = await Promise.all([0, 1, 2].map(async () => (await gateway.admin<{ id: string }>('POST', '/keys', { userId: user.body.id })).body.id));
  const repository = new SqlRequestLogRepository(gateway.storage.db);
  const end = gateway.clock.now();
  await gateway.app.services.requestLog.maintain(true);
  const inserting = performance.now();
  for (let start = 0; start < ROWS; start += BATCH) {
    const rows: RequestLogRow[] = [];
    for (let index = start; index < start + BATCH; index += 1) {
      const created = end - Math.floor((index / ROWS) * DAYS * 86_400_000);
      rows.push({
        id: `req_bench${index.toString().padStart(8, '0')}`,
        created,
        account: { type: 'user', id: user.body.id },
        keyId: keys[index % keys.length]!,
        userId: user.body.id,
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
    await repository.append(rows, []);
  }
  console.log(`${database}: inserted ${ROWS.toLocaleString('en-US')} rows in ${((performance.now() - inserting) / 1000).toFixed(1)} s`);
  const client = await managementKey(gateway, user.body.id);
  const from = new Date(end - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10);
  const to = new Date(end).toISOString().slice(0, 10);
  const timed = async (path: string): Promise<void> => {
    const times: number[] = [];
    for (let attempt = 0; attempt < 6; attempt += 1) {
      const started = performance.now();
      const answer = await client.call<{ data: unknown[] }>('GET', path);
      times.push(performance.now() - started);
      if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
    }
    const [first, ...rest] = times;
    rest.sort((a, b) => a - b);
    console.log(`${database}: GET /api/v1${path}: first ${first!.toFixed(1)} ms, median of the next five ${rest[2]!.toFixed(1)} ms`);
  };
  await timed('/requests?limit=50');
  await timed(`/requests?limit=50&model=gpt-4.1-mini&from=${from}`);
  await timed(`/usage?from=${from}&to=${to}&groupBy=day,model`);
  await timed(`/usage?from=${from}&to=${to}&groupBy=day,model,key,endpoint`);
} finally {
  await gateway.close();
}
