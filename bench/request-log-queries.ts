// `npm run bench:log [-- --postgres]` (DESIGN §13): 100,000 request-log rows for one account over 30 days, then the time of the
// first page of GET /api/v1/requests and of GET /api/v1/usage for the 30 days (target ≤ 100 ms each), through real HTTP.

import { performance } from 'node:perf_hooks';
import { startTestGateway } from '../test/helpers/gateway.ts';
import { managementKey } from '../test/helpers/management.ts';
import { seedRequestLog } from './seed-request-log.ts';

const ROWS = 100_000;
const DAYS = 30;

const database = process.argv.includes('--postgres') ? 'postgres' : 'sqlite';
const gateway = await startTestGateway({ database, config: { requestLog: true } });
try {
  const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'heavy user', balance: '100' });
  const keys = await Promise.all([0, 1, 2].map(async () => (await gateway.admin<{ id: string }>('POST', '/keys', { userId: user.body.id })).body.id));
  const end = gateway.clock.now();
  const inserting = performance.now();
  await seedRequestLog(gateway, user.body.id, keys, ROWS, DAYS);
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
  await timed(`/requests?limit=50&keyId=${keys[2]}`);
  await timed(`/usage?from=${from}&to=${to}&groupBy=day,model`);
  await timed(`/usage?from=${from}&to=${to}&groupBy=day,model,key,endpoint`);
} finally {
  await gateway.close();
}
