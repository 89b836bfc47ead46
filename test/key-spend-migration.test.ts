import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { SqlAccountsRepository } from '../src/storage/accounts-repository.ts';
import { SqlKeysRepository } from '../src/storage/keys-repository.ts';
import { SqlLedgerRepository } from '../src/storage/ledger-repository.ts';
import { withDatabaseAt } from './helpers/migrations.ts';

const DAY = 86_400_000;

for (const engine of ['sqlite', 'postgres'] as const) {
  test(`${engine}: 0030 sums the spend of the keys' days already in the ledger, drops ledger_key_time, and later writes add to those days`, async () => {
    await withDatabaseAt(engine, '0029-request-log-two-indexes', async ({ storage, schema, migrateToLatest }) => {
      await new SqlAccountsRepository(storage.db).createUser({ id: 'usr_old', name: 'before the migration' }, 0);
      const today = Date.UTC(2026, 10, 27);
      const row = (id: string, amount: bigint, kind: 'charge' | 'refund' | 'credit', createdAt: number, keyId: string | null) => ({
        id, account_type: 'user' as const, account_id: 'usr_old', amount_nano: amount, kind, request_id: null, key_id: keyId, model: 'm', description: kind, created_at: createdAt,
      });
      // Amounts past 2^53 nano-units: the sums stay exact.
      const big = 9_007_199_254_740_993n;
      await storage.db
        .insertInto('ledger')
        .values([
          row('led_1', -big, 'charge', today - 2 * DAY + 5, 'key_a'),
          row('led_2', -3n, 'charge', today - 2 * DAY + 6, 'key_a'),
          row('led_3', 1n, 'refund', today - DAY, 'key_a'),
          row('led_4', -10n, 'charge', today + 1, 'key_a'),
          row('led_5', 100n, 'credit', today + 2, 'key_a'),
          row('led_6', -20n, 'charge', today + 3, 'key_b'),
          row('led_7', -40n, 'charge', today + 4, null),
        ])
        .execute();

      await migrateToLatest();
      const keys = new SqlKeysRepository(storage.db);
      assert.equal(await keys.spentSince('key_a', 0), big + 3n - 1n + 10n, 'every day of the key, refunds taken back, credits not counted');
      assert.equal(await keys.spentSince('key_a', today - DAY), -1n + 10n);
      assert.equal(await keys.spentSince('key_a', today), 10n);
      assert.equal(await keys.spentSince('key_b', 0), 20n);
      const days = await storage.db.selectFrom('key_spend_daily').select(['key_id', 'day']).orderBy('key_id').orderBy('day').execute();
      assert.deepEqual(
        days.map((day) => `${day.key_id} ${Number(day.day) - today}`),
        [`key_a ${-2 * DAY}`, `key_a ${-DAY}`, 'key_a 0', 'key_b 0'],
        'one row a key and UTC day',
      );

      // The gateway's next write adds to the day the migration summed.
      await new SqlLedgerRepository(storage.db, storage.sqlite).append([
        { id: 'led_8', account: { type: 'user', id: 'usr_old' }, amount: -5n, kind: 'charge', requestId: null, keyId: 'key_a', model: 'm', description: 'c', createdAt: today + 10 },
      ]);
      assert.equal(await keys.spentSince('key_a', today), 15n);
      assert.equal((await storage.db.selectFrom('key_spend_daily').select('day').where('key_id', '=', 'key_a').execute()).length, 3, 'no second row for the day');

      const indexes =
        engine === 'postgres'
          ? await sql<{ name: string }>`select indexname as name from pg_indexes where schemaname = ${schema} and tablename = 'ledger'`.execute(storage.db)
          : await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'ledger'`.execute(storage.db);
      const names = indexes.rows.map((index) => index.name);
      assert.ok(!names.includes('ledger_key_time'), `ledger_key_time is gone: ${names.join(', ')}`);
      assert.ok(names.includes('ledger_account'), 'the account index stays');
    });
  });
}
