import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { after, describe, test } from 'node:test';
import { pino } from 'pino';
import { BalanceBook } from '../features/billing/balance-book.ts';
import { ManualClock } from '../lib/clock.ts';
import { newId } from '../lib/ids.ts';
import { SqlAccountsRepository } from './accounts-repository.ts';
import { dropPostgresSchema, openStorage, reusingStatements, type Storage } from './database.ts';
import { SqlKeysRepository } from './keys-repository.ts';
import type { BalanceMove, LedgerEntry, LedgerRepository } from '../features/billing/ledger.ts';
import { SqlLedgerRepository } from './ledger-repository.ts';
import { migrationProvider } from './migrations/index.ts';

const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const silent = pino({ level: 'silent' });

const engines: Array<{ name: string; open(): Promise<{ url: string; storage: Storage; drop(): Promise<void> }> }> = [
  {
    name: 'sqlite',
    async open() {
      // A file, not memory: reopening must find the same database for the migration test to mean anything.
      const directory = mkdtempSync(join(tmpdir(), 'tollgate-storage-'));
      const url = `sqlite:${directory}/tollgate.db`;
      return { url, storage: await openStorage(url), drop: async () => rmSync(directory, { recursive: true, force: true }) };
    },
  },
  {
    name: 'postgres',
    async open() {
      const schema = `tg_test_${randomBytes(6).toString('hex')}`;
      const url = `${POSTGRES_URL}?schema=${schema}`;
      return { url, storage: await openStorage(url), drop: () => dropPostgresSchema(POSTGRES_URL, schema) };
    },
  },
];

for (const engine of engines) {
  describe(`storage on ${engine.name}`, async () => {
    const { url, storage, drop } = await engine.open();
    after(async () => {
      await storage.close();
      await drop();
    });
    const clock = new ManualClock();
    const accounts = new SqlAccountsRepository(storage.db);
    const ledger = new SqlLedgerRepository(storage.db);

    test('migrations are idempotent: opening again applies none twice and changes no table or row', async () => {
      const applied = async (db: Storage['db']) =>
        (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((row) => row.name);
      const tables = async (db: Storage['db']) =>
        (await db.introspection.getTables())
          .filter((table) => table.schema === undefined || table.schema === new URL(url.replace(/^sqlite:/, 'file:')).searchParams.get('schema'))
          .map((table) => `${table.name}(${table.columns.map((column) => `${column.name}:${column.dataType}`).join(',')})`).sort();
      const expected = Object.keys(await migrationProvider.getMigrations()).sort();
      assert.deepEqual(await applied(storage.db), expected, 'every migration is applied once');
      const id = newId('user');
      await accounts.createUser({ id, name: 'survivor' }, clock.now());
      const before = await tables(storage.db);
      const again = await openStorage(url);
      try {
        assert.deepEqual(await applied(again.db), expected, 'reopening applies nothing again');
        assert.deepEqual(await tables(again.db), before, 'the schema is unchanged');
        assert.equal((await new SqlAccountsRepository(again.db).getUser(id))?.name, 'survivor', 'rows survive');
      } finally {
        await again.close();
      }
    });

    test('balances move only through the ledger and always equal its sum', async () => {
      const id = newId('user');
      await accounts.createUser({ id, name: 'a' }, clock.now());
      const book = new BalanceBook(ledger, clock, 5, silent);
      await book.recordNow({ account: { type: 'user', id }, amount: 10_000_000_000n, kind: 'credit', requestId: null, model: null, description: 'top up' });
      for (let i = 0; i < 25; i += 1) book.record({ account: { type: 'user', id }, amount: -123_000n, kind: 'charge', requestId: `req_${i}`, model: 'm', description: 'c' });
      assert.equal(await book.balance({ type: 'user', id }), 10_000_000_000n - 25n * 123_000n, 'applied in memory before the write');
      await book.close();
      assert.equal(await ledger.balance({ type: 'user', id }), 10_000_000_000n - 25n * 123_000n);
      assert.equal(await ledger.sum({ type: 'user', id }), await ledger.balance({ type: 'user', id }));
      const entries = await ledger.entries({ type: 'user', id }, 100);
      assert.equal(entries.length, 26);
      assert.equal(entries.filter((entry) => entry.kind === 'charge').length, 25);
    });

    test('a ledger batch written again after its commit went unacknowledged moves the balance once per entry', async () => {
      // As the gateway writes (on SQLite with prepared multi-row inserts of 32 entries, the rest one by one).
      const written = new SqlLedgerRepository(storage.db, storage.sqlite);
      const id = newId('user');
      await accounts.createUser({ id, name: 'retried' }, clock.now());
      const batch = Array.from({ length: 70 }, (_, index) => ({
        id: newId('ledger'),
        account: { type: 'user' as const, id },
        amount: -(1_000n + BigInt(index)),
        kind: 'charge' as const,
        requestId: `req_retry_${index}`,
        model: 'm',
        description: 'c',
        createdAt: clock.now(),
      }));
      const total = (entries: typeof batch): bigint => entries.reduce((sum, entry) => sum + entry.amount, 0n);
      // Already there: an entry of the first chunk of 32, one of the second, one of the tail.
      const early = [batch[3]!, batch[40]!, batch[66]!];
      await written.append(early);
      assert.equal(await written.balance({ type: 'user', id }), total(early));
      await written.append(batch);
      assert.equal(await written.balance({ type: 'user', id }), total(batch), 'the three entries written before count once');
      await written.append(batch);
      assert.equal(await written.balance({ type: 'user', id }), total(batch), 'written a third time, nothing moves');
      assert.equal(await written.sum({ type: 'user', id }), total(batch), 'balance = Σ ledger');
      assert.equal((await written.entries({ type: 'user', id }, 200)).length, 70);
    });

    test("a key's spend is kept by UTC day with its entries: Σ since each period's start, an entry written again counted once", async () => {
      // As the gateway writes (SQLite: prepared statements) and through the query builder (PostgreSQL's path): the same days.
      const keys = new SqlKeysRepository(storage.db);
      const DAY = 86_400_000;
      const monday = Date.UTC(2026, 10, 23);
      const outcome = async (repository: SqlLedgerRepository) => {
        const userId = newId('user');
        await accounts.createUser({ id: userId, name: 'spender' }, clock.now());
        const keyId = newId('key');
        const otherKey = newId('key');
        const entry = (amount: bigint, kind: LedgerEntry['kind'], createdAt: number, key: string | null = keyId): LedgerEntry => ({
          id: newId('ledger'), account: { type: 'user', id: userId }, amount, kind, requestId: null, keyId: key, model: 'm', description: kind, createdAt,
        });
        const first = [
          entry(-1_000n, 'charge', monday - 1),
          entry(-2_000n, 'charge', monday),
          entry(500n, 'refund', monday + 3 * 3_600_000),
          entry(-4_000n, 'charge', monday + 2 * DAY),
          entry(10_000n, 'credit', monday + 2 * DAY),
          entry(-7_000n, 'charge', monday + DAY, otherKey),
          entry(-8_000n, 'charge', monday + DAY, null),
        ];
        await repository.append(first);
        // Written again with one new entry: the entries already there count once.
        await repository.append([...first.slice(0, 4), entry(-16_000n, 'charge', monday + 2 * DAY + 1)]);
        const starts = [0, monday - DAY, monday, monday + DAY, monday + 2 * DAY, monday + 3 * DAY];
        const spent = await Promise.all(starts.map((since) => keys.spentSince(keyId, since)));
        // What the ledger's entries say, summed from the ledger itself.
        const fromLedger = await Promise.all(
          starts.map(async (since) => {
            const row = await storage.db
              .selectFrom('ledger')
              .select(sql<string | null>`cast(sum(amount_nano) as text)`.as('total'))
              .where('key_id', '=', keyId)
              .where('created_at', '>=', since)
              .where('kind', 'in', ['charge', 'refund'])
              .executeTakeFirst();
            return -BigInt(row?.total ?? '0');
          }),
        );
        assert.deepEqual(spent, fromLedger, "the days' sums are the ledger's");
        return { spent, other: await keys.spentSince(otherKey, 0) };
      };
      const prepared = await outcome(new SqlLedgerRepository(storage.db, storage.sqlite));
      assert.deepEqual(prepared.spent, [22_500n, 22_500n, 21_500n, 20_000n, 20_000n, 0n], 'charges count positive, refunds back, credits and other keys not at all');
      assert.equal(prepared.other, 7_000n);
      assert.deepEqual(await outcome(new SqlLedgerRepository(storage.db)), prepared, 'the query builder keeps the same days');
      await assert.rejects(keys.spentSince(newId('key'), monday + 1), RangeError, 'a start within a day is refused, not answered wrong');
    });

    test('the balance after each entry (the ledger page) is Σ of the entries through it, entries of one millisecond ordered by id', async () => {
      const id = newId('user');
      await accounts.createUser({ id, name: 'pages' }, clock.now());
      const account = { type: 'user' as const, id };
      const at = clock.now();
      // Three entries share a millisecond: the position's id decides which of them are through it.
      const entries: LedgerEntry[] = [5_000n, -1n, -20n, -300n, 4n, -50_000n].map((amount, index) => ({
        id: newId('ledger'), account, amount, kind: amount > 0n ? 'credit' : 'charge', requestId: null, model: null, description: 'p', createdAt: index >= 1 && index <= 3 ? at + 1 : at + index,
      }));
      await ledger.append(entries);
      const newestFirst = await ledger.entries(account, 10);
      let through = 0n;
      const expected = new Map<string, bigint>();
      for (const entry of [...newestFirst].reverse()) expected.set(entry.id, (through += entry.amount));
      for (const entry of newestFirst) assert.equal(await ledger.sumThrough(account, entry), expected.get(entry.id), `through ${entry.id}`);
      assert.equal(await ledger.sumThrough(account, newestFirst[0]!), await ledger.balance(account), 'the newest entry ends at the balance');
    });

    test("entries of every shape in one multi-row insert read back as written (values repeated from the chunk's first entry or not)", async () => {
      // SQLite binds a chunk's repeated texts once and 0 in their place (SqliteBatchInsert's `repeated`): every mix of
      // repeated, different and null values must land as it was.
      const written = new SqlLedgerRepository(storage.db, storage.sqlite);
      const userId = newId('user');
      const orgId = newId('org');
      await accounts.createUser({ id: userId, name: 'shapes' }, clock.now());
      await accounts.createOrg({ id: orgId, name: 'shapes inc', ownerId: userId, promptCaching: false }, clock.now());
      const kinds = ['charge', 'credit', 'refund'] as const;
      const batch: LedgerEntry[] = Array.from({ length: 70 }, (_, index) => ({
        id: newId('ledger'),
        account: index % 4 === 1 ? { type: 'org' as const, id: orgId } : { type: 'user' as const, id: userId },
        amount: index % 3 === 0 ? -(500n + BigInt(index)) : 100n + BigInt(index),
        kind: kinds[index % 3]!,
        requestId: index % 5 === 0 ? null : `req_shape_${index}`,
        keyId: [undefined, null, 'key_a', 'key_b'][index % 4] as string | null | undefined,
        model: [null, 'gpt-4o-mini', 'claude-sonnet-4-6'][index % 3]!,
        description: index % 7 === 3 ? '' : index % 2 === 0 ? 'charge for a call' : 'top-up',
        createdAt: clock.now() + index,
      }));
      await written.append(batch);
      for (const account of [{ type: 'user' as const, id: userId }, { type: 'org' as const, id: orgId }]) {
        const expected = batch.filter((entry) => entry.account.type === account.type).map((entry) => ({ ...entry, keyId: entry.keyId ?? null }));
        const read = await written.entries(account, 200);
        assert.deepEqual(read.sort((a, b) => a.createdAt - b.createdAt), expected, `${account.type}'s entries read back as written`);
        assert.equal(await written.balance(account), expected.reduce((sum, entry) => sum + entry.amount, 0n));
      }
    });

    test('a batch moves balances, thresholds and reservations alike through the prepared updates (SQLite) and the query builder', async () => {
      // The gateway's repository (with the SQLite handle: prepared balance and lease updates) against the query builder's
      // (no handle), each on its own user and org set up alike: same balances, same reservations left, same moves told.
      const outcome = async (repository: SqlLedgerRepository) => {
        const userId = newId('user');
        const orgId = newId('org');
        await accounts.createUser({ id: userId, name: 'prepared' }, clock.now());
        await accounts.createOrg({ id: orgId, name: 'prepared inc', ownerId: userId, promptCaching: false }, clock.now());
        const huge = 9_007_199_254_740_993n * 100n;
        await storage.db.updateTable('users').set({ balance_nano: huge, low_balance_alert_nano: huge - 5_000n }).where('id', '=', userId).execute();
        await storage.db.updateTable('orgs').set({ balance_nano: 50_000n, auto_recharge_below_nano: 20_000n }).where('id', '=', orgId).execute();
        const user = { type: 'user' as const, id: userId };
        const org = { type: 'org' as const, id: orgId };
        const lease = { node: 'node-a', expiresAt: clock.now() + 60_000 };
        await repository.reserve(user, lease, () => 8_000n, clock.now());
        await repository.reserve(org, lease, () => 3_000n, clock.now());
        const moves: BalanceMove[] = [];
        repository.watch(async (write) => void moves.push(...write.moves));
        const entry = (account: typeof user | typeof org, amount: bigint, kind: LedgerEntry['kind']): LedgerEntry => ({
          id: newId('ledger'), account, amount, kind, requestId: null, keyId: null, model: 'm', description: kind, createdAt: clock.now(),
        });
        const result = await repository.append(
          [entry(user, -2_500n, 'charge'), entry(user, -4_000n, 'charge'), entry(user, 1_000n, 'refund'), entry(org, -35_000n, 'charge'), entry(org, 100n, 'credit')],
          undefined,
          lease,
        );
        const named = (map: Map<string, bigint>) => [map.get(`user:${userId}`), map.get(`org:${orgId}`)];
        const told = moves.map((move) => [move.account.type, move.before, move.after, move.lowBalanceAlert, move.autoRechargeBelow]);
        return { balances: named(result.balances), reserved: named(result.reserved), told, sums: [await repository.sum(user), await repository.sum(org)] };
      };
      const prepared = await outcome(new SqlLedgerRepository(storage.db, storage.sqlite));
      const built = await outcome(new SqlLedgerRepository(storage.db));
      const huge = 9_007_199_254_740_993n * 100n;
      assert.deepEqual(prepared.balances, [huge - 5_500n, 15_100n], 'balances moved exactly, past 2^53 too');
      assert.deepEqual(prepared.reserved, [1_500n, 0n], 'the charges came off the reservations, never below 0');
      assert.deepEqual(
        prepared.told,
        [['org', 50_000n, 15_100n, null, 20_000n], ['user', huge, huge - 5_500n, huge - 5_000n, null]],
        'both accounts with a threshold are told of, in the write order',
      );
      assert.deepEqual(prepared.sums, [-5_500n, -34_900n], 'the entries are in the ledger');
      assert.deepEqual(built, prepared, 'the query builder moves the same');
      const nobody = { type: 'user' as const, id: newId('user') };
      const orphan: LedgerEntry = { id: newId('ledger'), account: nobody, amount: -1n, kind: 'charge', requestId: null, model: null, description: 'c', createdAt: clock.now() };
      await assert.rejects(new SqlLedgerRepository(storage.db, storage.sqlite).append([orphan]), /unknown account/, 'an entry for no account fails the batch');
      assert.equal(await ledger.sum(nobody), 0n, 'and leaves nothing behind');
    });

    test('amounts beyond 2^53 nano-units stay exact', async () => {
      const id = newId('user');
      await accounts.createUser({ id, name: 'rich' }, clock.now());
      const huge = 9_007_199_254_740_993n * 100n;
      await ledger.append([{ id: newId('ledger'), account: { type: 'user', id }, amount: huge, kind: 'credit', requestId: null, model: null, description: 'big', createdAt: clock.now() }]);
      assert.equal(await ledger.balance({ type: 'user', id }), huge);
      assert.equal((await ledger.entries({ type: 'user', id }, 1))[0]?.amount, huge);
    });

    test('two balance books on one database (two processes) never lose a charge', async () => {
      const id = newId('user');
      await accounts.createUser({ id, name: 'shared' }, clock.now());
      const first = new BalanceBook(ledger, clock, 2, silent);
      const second = new BalanceBook(new SqlLedgerRepository(storage.db), clock, 3, silent);
      await first.recordNow({ account: { type: 'user', id }, amount: 1_000_000_000n, kind: 'credit', requestId: null, model: null, description: 'top up' });
      const writes: Array<Promise<void>> = [];
      for (let i = 0; i < 200; i += 1) {
        const book = i % 2 === 0 ? first : second;
        book.record({ account: { type: 'user', id }, amount: -1_000n, kind: 'charge', requestId: `req_${i}`, model: 'm', description: 'c' });
        if (i % 20 === 0) writes.push(book.flush());
      }
      await Promise.all(writes);
      await Promise.all([first.close(), second.close()]);
      assert.equal(await ledger.balance({ type: 'user', id }), 1_000_000_000n - 200n * 1_000n);
      assert.equal(await ledger.sum({ type: 'user', id }), 1_000_000_000n - 200n * 1_000n);
    });

    test("a reservation taken between a batch's commit and its acknowledgement does not grant that batch again", async () => {
      // The race two processes met near the end of a balance (an overdraft of a batch's worth of calls): the batch's commit
      // had taken its charges off the balance and the reservation, but the process had not yet heard, so a reservation
      // decided meanwhile counted them as still to come and reserved them again.
      const id = newId('user');
      const account = { type: 'user' as const, id };
      await accounts.createUser({ id, name: 'racing' }, clock.now());
      await ledger.append([{ id: newId('ledger'), account, amount: 8_000_000n, kind: 'credit', requestId: null, model: null, description: 'top up', createdAt: clock.now() }]);
      const gate = () => {
        let resolve = () => {};
        const promise = new Promise<void>((done) => (resolve = done));
        return { promise, resolve: () => resolve() };
      };
      const acknowledged = gate();
      const reserved = gate();
      let holdAcknowledgements = false;
      let decided = false;
      const repository = new SqlLedgerRepository(storage.db, storage.sqlite);
      const slow: LedgerRepository = Object.assign(Object.create(repository) as SqlLedgerRepository, {
        append: async (...args: Parameters<SqlLedgerRepository['append']>) => {
          const result = await repository.append(...args);
          if (holdAcknowledgements) await acknowledged.promise;
          return result;
        },
        reserve: async (...args: Parameters<SqlLedgerRepository['reserve']>) => {
          const result = await repository.reserve(...args);
          decided = holdAcknowledgements;
          if (holdAcknowledgements) await reserved.promise;
          return result;
        },
      });
      const book = new BalanceBook(slow, clock, 60_000, silent);
      try {
        assert.equal(await book.isPositive(account), true, 'the whole balance reserved (it is below the smallest slice)');
        for (let index = 0; index < 8; index += 1) book.record({ account, amount: -1_000_000n, kind: 'charge', requestId: `req_race_${index}`, model: 'm', description: 'c' });
        assert.equal(await book.isPositive(account), false, 'the reservation is spent');
        holdAcknowledgements = true;
        const flushed = book.flush();
        while ((await ledger.balance(account)) !== 0n) await new Promise((resolve) => setTimeout(resolve, 1));
        // The batch has committed; its acknowledgement waits. A call now asks for a new reservation.
        const admitted = book.isPositive(account);
        while (!decided) await new Promise((resolve) => setTimeout(resolve, 1));
        // The reservation has committed too; the batch's acknowledgement arrives first, then the reservation's.
        acknowledged.resolve();
        await flushed;
        reserved.resolve();
        assert.equal(await admitted, false, 'nothing is left to admit a call on');
        assert.equal(await book.isPositive(account), false);
        const lease = await storage.db.selectFrom('balance_leases').select(sql<string>`cast(amount_nano as text)`.as('amount')).where('account_id', '=', id).executeTakeFirstOrThrow();
        assert.equal(lease.amount, '0', 'no reservation is held on an empty balance');
      } finally {
        holdAcknowledgements = false;
        acknowledged.resolve();
        reserved.resolve();
        await book.close();
      }
      assert.equal(await ledger.balance(account), 0n);
      assert.equal(await ledger.sum(account), 0n);
    });

    test("a reservation taken after a batch's acknowledgement was lost (committed, then the connection failed) does not grant it again", async () => {
      const id = newId('user');
      const account = { type: 'user' as const, id };
      await accounts.createUser({ id, name: 'unacknowledged' }, clock.now());
      await ledger.append([{ id: newId('ledger'), account, amount: 8_000_000n, kind: 'credit', requestId: null, model: null, description: 'top up', createdAt: clock.now() }]);
      const repository = new SqlLedgerRepository(storage.db, storage.sqlite);
      let loseAcknowledgement = false;
      const lossy: LedgerRepository = Object.assign(Object.create(repository) as SqlLedgerRepository, {
        append: async (...args: Parameters<SqlLedgerRepository['append']>) => {
          const result = await repository.append(...args);
          if (!loseAcknowledgement) return result;
          loseAcknowledgement = false;
          throw new Error('connection lost after the commit');
        },
      });
      const book = new BalanceBook(lossy, clock, 60_000, silent);
      try {
        assert.equal(await book.isPositive(account), true);
        for (let index = 0; index < 8; index += 1) book.record({ account, amount: -1_000_000n, kind: 'charge', requestId: `req_lost_${index}`, model: 'm', description: 'c' });
        loseAcknowledgement = true;
        await assert.rejects(book.flush(), /connection lost/);
        assert.equal(await ledger.balance(account), 0n, 'the batch is in the ledger; the book holds it queued again');
        assert.equal(await book.isPositive(account), false, 'nothing is left to admit a call on');
        await book.flush();
        assert.equal(await book.isPositive(account), false);
      } finally {
        await book.close();
      }
      assert.equal(await ledger.balance(account), 0n, 'the batch written again moved nothing');
      assert.equal(await ledger.sum(account), 0n);
    });

    test('a revoked key is found no more as live, and revoking twice reports nothing', async () => {
      const userId = newId('user');
      await accounts.createUser({ id: userId, name: 'k' }, clock.now());
      const keys = new SqlKeysRepository(storage.db);
      const key = { id: newId('key'), userId, orgId: null, name: null, allowedModels: ['gpt-4o'], rateLimit: null, revokedAt: null, createdAt: clock.now(), scope: 'inference' as const, expiresAt: null, disabled: false, limit: null, tpm: null };
      await keys.insert(key, `hash-${key.id}`, 'tg-abcd');
      assert.deepEqual((await keys.findByHash(`hash-${key.id}`))?.allowedModels, ['gpt-4o']);
      assert.equal(await keys.revoke(key.id, clock.now()), `hash-${key.id}`);
      assert.equal(await keys.revoke(key.id, clock.now()), undefined);
      assert.notEqual((await keys.findByHash(`hash-${key.id}`))?.revokedAt, null);
    });

    test('organisations keep their owner as a member and roles can change', async () => {
      const owner = newId('user');
      const member = newId('user');
      await accounts.createUser({ id: owner, name: 'o' }, clock.now());
      await accounts.createUser({ id: member, name: 'm' }, clock.now());
      const orgId = newId('org');
      await accounts.createOrg({ id: orgId, name: 'acme', ownerId: owner, promptCaching: false }, clock.now());
      assert.equal(await accounts.getRole(orgId, owner), 'owner');
      await accounts.setMember(orgId, member, 'member');
      await accounts.setMember(orgId, member, 'admin');
      assert.equal(await accounts.getRole(orgId, member), 'admin');
      assert.equal((await accounts.updateOrg(orgId, { promptCaching: true }))?.promptCaching, true);
    });
  });
}

test('SQLite statements are kept for the next query of the same text, and one still being read is not handed out twice', () => {
  const sqlite = new SqliteDatabase(':memory:');
  const kept = reusingStatements(sqlite);
  kept.prepare('create table t (n integer)').run([]);
  for (const n of [1, 2, 3]) kept.prepare('insert into t (n) values (?)').run([n]);
  const select = 'select n from t where n >= ? order by n';
  const first = kept.prepare(select);
  assert.equal(kept.prepare(select), first, 'the same statement again');
  const reading = first.iterate([1]);
  assert.deepEqual(reading.next().value, { n: 1 });
  const second = kept.prepare(select);
  assert.notEqual(second, first, 'a statement being read is not reused');
  assert.deepEqual(second.all([2]), [{ n: 2 }, { n: 3 }]);
  assert.deepEqual([...reading], [{ n: 2 }, { n: 3 }], 'the first read goes on undisturbed');
  kept.close();
  assert.equal(sqlite.open, false);
});
