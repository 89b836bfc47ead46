import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import type { RequestLogRow } from '../src/features/usage/request-log.ts';
import { SqlRequestLogRepository } from '../src/storage/request-log-repository.ts';
import { withDatabaseAt } from './helpers/migrations.ts';
import { logRow } from './helpers/request-log-rows.ts';

const DAY_MS = 86_400_000;

const row = logRow;

const columns = (entry: RequestLogRow) => ({
  id: entry.id,
  created_at: entry.created,
  account_type: entry.account.type,
  account_id: entry.account.id,
  key_id: entry.keyId,
  user_id: entry.userId,
  org_id: entry.orgId,
  endpoint: entry.endpoint,
  model: entry.model,
  served_model: entry.servedModel,
  provider: entry.provider,
  channel: entry.channel,
  attempts: entry.attempts,
  stream: entry.stream ? 1 : 0,
  status: entry.status,
  error_type: entry.errorType,
  input_tokens: entry.inputTokens,
  output_tokens: entry.outputTokens,
  cache_read_tokens: entry.cacheReadTokens,
  cache_write_tokens: entry.cacheWriteTokens,
  cost_nano: sql<bigint>`cast(${entry.cost.toString()} as bigint)`,
  latency_ms: entry.latencyMs,
  ttft_ms: entry.ttftMs,
  task_id: entry.taskId,
});

for (const engine of ['sqlite', 'postgres'] as const) {
  test(`${engine}: 0028 keys the request log by time, 0029 leaves it two indexes, and the rows written before them stay`, async () => {
    await withDatabaseAt(engine, '0027-chat-messages-assistant', async ({ storage, schema, migrateToLatest }) => {
      const now = Date.now();
      const before = [row('req_old_1', now - 3 * DAY_MS), row('req_old_2', now - 60_000, 'key_b'), row('req_old_3', now - 1_000)];
      await storage.db.insertInto('request_log').values(before.map(columns)).execute();

      await migrateToLatest();
      const repository = new SqlRequestLogRepository(storage.db, storage.sqlite);
      const listed = await repository.requests({ account: { type: 'user', id: 'usr_1' }, limit: 10 });
      assert.deepEqual(
        listed.map((entry) => entry.id),
        ['req_old_3', 'req_old_2', 'req_old_1'],
        'every row survives, newest first',
      );
      assert.deepEqual(listed[1], before[1], 'a row reads back exactly as it was written');

      // Written again (a retried batch), a row is skipped; a new one lands in order.
      await repository.append([before[2]!, row('req_new', now)]);
      const again = await repository.requests({ account: { type: 'user', id: 'usr_1' }, limit: 10 });
      assert.deepEqual(
        again.map((entry) => entry.id),
        ['req_new', 'req_old_3', 'req_old_2', 'req_old_1'],
      );
      const byKey = await repository.requests({ account: { type: 'user', id: 'usr_1' }, keyId: 'key_b', limit: 10 });
      assert.deepEqual(byKey.map((entry) => entry.id), ['req_old_2']);

      // Retention still removes what is older than the cutoff.
      await repository.maintain(now, now - DAY_MS);
      const kept = await repository.requests({ limit: 10 });
      assert.deepEqual(
        kept.map((entry) => entry.id),
        ['req_new', 'req_old_3', 'req_old_2'],
      );

      const indexes =
        engine === 'postgres'
          ? await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = ${schema} and tablename = 'request_log'`.execute(storage.db)
          : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'request_log'`.execute(storage.db);
      const names = indexes.rows.map((index) => index.name);
      assert.ok(!names.includes('request_log_time'), `the time index is gone (the primary key orders by time): ${names.join(', ')}`);
      for (const name of ['request_log_by_user', 'request_log_by_org', 'request_log_task']) assert.ok(names.includes(name), `${name} is there`);
      for (const name of ['request_log_account', 'request_log_user', 'request_log_key']) assert.ok(!names.includes(name), `${name} is gone (0029)`);
    });
  });
}
