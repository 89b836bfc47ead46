// `npm run bench:ledger [-- --postgres] [-- --entries N]` (issue 16): one key's N ledger entries (1,000,000 unless told) over
// the 30 days before the gateway's now, written as the gateway writes them (SqlLedgerRepository.append); then the time of
// the reads that could grow with them: the key's spend in its month (what the key spend book reads at a key's first call
// of a period and every 30 s after, and what the key-limit alert reads in every ledger write when mail is on) and the
// ledger's pages as GET /api/v1/ledger serves them (each entry with the balance after it), the newest and one 5,000 back.

import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import type { LedgerEntry } from '../src/features/billing/ledger.ts';
import { DAY_MS, periodStart } from '../src/features/keys/spend-periods.ts';
import { SqlKeysRepository } from '../src/storage/keys-repository.ts';
import { SqlLedgerRepository } from '../src/storage/ledger-repository.ts';
import { startTestGateway } from '../test/helpers/gateway.ts';
import { managementKey } from '../test/helpers/management.ts';

const DAYS = 30;
const BATCH = 4_096;

const argument = (name: string): string | undefined => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const entries = Number(argument('--entries') ?? 1_000_000);
const database = process.argv.includes('--postgres') ? 'postgres' : 'sqlite';

/** The first of six runs, and the median of the other five, in ms. */
async function timed(run: () => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let attempt = 0; attempt < 6; attempt += 1) {
    const started = performance.now();
    await run();
    times.push(performance.now() - started);
  }
  const [first, ...rest] = times;
  rest.sort((a, b) => a - b);
  return `first ${first!.toFixed(2)} ms, median of the next five ${rest[2]!.toFixed(2)} ms`;
}

const gateway = await startTestGateway({ database });
try {
  // Near a month's end, so the month holds most of the 30 days' entries.
  gateway.clock.set(Date.parse('2026-11-30T23:00:00Z'));
  const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'busy key', balance: '1000000' });
  const key = await gateway.admin<{ id: string }>('POST', '/keys', { userId: user.body.id });
  if (key.status !== 200) throw new Error(`creating the key: ${JSON.stringify(key.body)}`);
  const account = { type: 'user' as const, id: user.body.id };
  const ledger = new SqlLedgerRepository(gateway.storage.db, gateway.storage.sqlite);
  const end = gateway.clock.now();
  const writing = performance.now();
  for (let start = 0; start < entries; start += BATCH) {
    const batch: LedgerEntry[] = [];
    for (let index = start; index < Math.min(entries, start + BATCH); index += 1) {
      const createdAt = end - Math.floor(((entries - index) / entries) * DAYS * DAY_MS);
      batch.push({ id: `led_bench${index.toString().padStart(9, '0')}`, account, amount: -1_234_000n, kind: 'charge', requestId: `req_bench${index}`, keyId: key.body.id, model: 'gpt-4.1-mini', description: 'chat.completions', createdAt });
    }
    await ledger.append(batch);
  }
  console.log(`${database}: wrote ${entries.toLocaleString('en-US')} ledger entries of one key in ${((performance.now() - writing) / 1000).toFixed(1)} s`);
  // PostgreSQL plans from table statistics, which autovacuum refreshes within a minute of a write this size; until then it
  // takes the ledger for empty and sorts the account's every entry for a page.
  if (database === 'postgres') await sql`analyze ledger`.execute(gateway.storage.db);

  const keys = new SqlKeysRepository(gateway.storage.db);
  const month = periodStart('month', end);
  const spent = await keys.spentSince(key.body.id, month);
  console.log(`${database}: the key's spend this month (${spent} nano, its entries since ${new Date(month).toISOString().slice(0, 10)}): ${await timed(() => keys.spentSince(key.body.id, month))}`);

  const client = await managementKey(gateway, user.body.id);
  const page = async (path: string): Promise<{ data: Array<{ id: string; createdAt: number }>; next_cursor: string | null }> => {
    const answer = await client.call<{ data: Array<{ id: string; createdAt: number }>; next_cursor: string | null }>('GET', path);
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  console.log(`${database}: GET /api/v1/ledger?limit=50 (the newest page): ${await timed(() => page('/ledger?limit=50'))}`);
  let cursor: string | null = null;
  for (let skipped = 0; skipped < 5_000; skipped += 100) cursor = (await page(`/ledger?limit=100${cursor ? `&cursor=${cursor}` : ''}`)).next_cursor;
  console.log(`${database}: GET /api/v1/ledger?limit=50 after the newest 5,000: ${await timed(() => page(`/ledger?limit=50&cursor=${cursor}`))}`);
} finally {
  await gateway.close();
}
