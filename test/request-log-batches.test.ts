import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dayOf, type RequestLogRow } from '../src/features/usage/request-log.ts';
import { dropPostgresSchema, openStorage } from '../src/storage/database.ts';
import { SqlRequestLogRepository } from '../src/storage/request-log-repository.ts';
import { POSTGRES_URL, uniqueSchema } from './helpers/gateway.ts';
import { logRow } from './helpers/request-log-rows.ts';

/**
 * A batch is written again when its commit went through but the answer was lost: each row must land once and move the
 * rollups once, whether the row sits in one of SQLite's multi-row inserts (32 rows) or in the batch's tail, written row by row.
 */
for (const engine of ['sqlite', 'postgres'] as const) {
  test(`${engine}: a request-log batch written again lands each row once and counts it once in /usage`, async () => {
    const schema = uniqueSchema();
    const directory = mkdtempSync(join(tmpdir(), 'tollgate-log-batches-'));
    const storage = await openStorage(engine === 'postgres' ? `${POSTGRES_URL}?schema=${schema}` : `sqlite:${join(directory, 'tollgate.db')}`);
    try {
      const repository = new SqlRequestLogRepository(storage.db, storage.sqlite);
      const now = Date.now();
      const rows: RequestLogRow[] = Array.from({ length: 75 }, (_, index) => logRow(`req_${String(index).padStart(3, '0')}`, now - 75 + index, index % 3 === 0 ? 'key_b' : 'key_a'));
      // Rows of every shape SQLite's batch encodes (see sqliteRow): a redirect to an analogue, a request that never
      // resolved a model, an org paying, a user paying for another user's key (a bot's owner): each reads back as written.
      const variants: RequestLogRow[] = [
        { ...logRow('req_var_redirect', now + 1), servedModel: 'gpt-4.1-mini' },
        { ...logRow('req_var_unresolved', now + 2), servedModel: null, provider: null, channel: null, attempts: 0, status: 404, errorType: 'not_found_error', cost: 0n },
        { ...logRow('req_var_nothing', now + 3), model: null, servedModel: null, provider: null },
        { ...logRow('req_var_org', now + 4), account: { type: 'org', id: 'org_1' }, orgId: 'org_1' },
        { ...logRow('req_var_other_user', now + 5), account: { type: 'user', id: 'usr_2' } },
      ];
      const usage = async () => {
        const [total] = await repository.usage({ account: { type: 'user', id: 'usr_1' }, from: dayOf(now - DAY_MS), to: dayOf(now + DAY_MS), groupBy: [] });
        return { requests: total?.requests ?? 0, cost: total?.cost ?? 0n, input: total?.inputTokens ?? 0 };
      };
      const listed = async () => (await repository.requests({ account: { type: 'user', id: 'usr_1' }, limit: 200 })).map((row) => row.id);

      // Already there: a row of the first full chunk, one of the second, and one of the tail (rows 64–74).
      await repository.append([rows[5]!, rows[40]!, rows[70]!]);
      assert.deepEqual(await usage(), { requests: 3, cost: 4_500n, input: 30 });

      await repository.append(rows);
      const ids = await listed();
      assert.equal(ids.length, 75, 'each row once');
      assert.deepEqual(ids, rows.map((row) => row.id).reverse(), 'newest first');
      assert.deepEqual(await usage(), { requests: 75, cost: 75n * 1_500n, input: 750 }, 'the three rows written before are not counted again');

      // The whole batch once more (a second lost answer): nothing changes.
      await repository.append(rows);
      assert.equal((await listed()).length, 75);
      assert.deepEqual(await usage(), { requests: 75, cost: 75n * 1_500n, input: 750 });

      // Each shape in a chunk of 32 (with rows before it) and alone in a tail.
      const mixed = [...Array.from({ length: 27 }, (_, index) => logRow(`req_fill_${index}`, now - 200 + index)), ...variants, { ...variants[0]!, id: 'req_var_tail', created: now + 6 }];
      await repository.append(mixed);
      const everyRow = await repository.requests({ limit: 500 });
      for (const written of mixed) assert.deepEqual(everyRow.find((row) => row.id === written.id), written, `${written.id} reads back as written`);
      await repository.append(rows.slice(0, 1).concat(mixed.slice(0, 40)));
      assert.equal((await repository.requests({ limit: 500 })).length, 75 + mixed.length, 'written again: nothing added');

      // A batch of only new rows, whole chunks and a tail: all counted.
      const more = Array.from({ length: 70 }, (_, index) => logRow(`req_new_${index}`, now + index));
      await repository.append(more);
      const chargedMixed = mixed.filter((row) => row.account.type === 'user' && row.account.id === 'usr_1');
      const expected = 145 + chargedMixed.length;
      assert.deepEqual(await usage(), { requests: expected, cost: chargedMixed.reduce((sum, row) => sum + row.cost, 145n * 1_500n), input: expected * 10 });
      const byKey = await repository.usage({ account: { type: 'user', id: 'usr_1' }, from: dayOf(now - DAY_MS), to: dayOf(now + DAY_MS), groupBy: ['key'] });
      assert.deepEqual(
        byKey.map((row) => [row.keyId, row.requests]).sort(),
        [['key_a', 50 + 70 + chargedMixed.length], ['key_b', 25]],
      );
    } finally {
      await storage.close();
      if (engine === 'postgres') await dropPostgresSchema(POSTGRES_URL, schema);
      rmSync(directory, { recursive: true, force: true });
    }
  });
}

const DAY_MS = 86_400_000;
