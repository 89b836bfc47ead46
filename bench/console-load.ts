// `npm run bench:console [-- --postgres]` (DESIGN §13): first load of /console in Chromium for an account with 100,000
// request-log rows over 30 days (target ≤ 1 s). Each load is a fresh browser profile (empty cache) holding a session cookie;
// it is timed from navigation start to the end of the last network response (network idle without Playwright's 500 ms
// quiet window), and to the moment the spend chart and the recent-requests table are on screen.

import { performance } from 'node:perf_hooks';
import { ManualClock } from '../src/lib/clock.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { startTestGateway } from '../test/helpers/gateway.ts';
import { createCustomer, signIn } from '../test/helpers/management.ts';
import { seedRequestLog } from './seed-request-log.ts';

const ROWS = 100_000;
const DAYS = 30;
const LOADS = 6;

const database = process.argv.includes('--postgres') ? 'postgres' : 'sqlite';
// The page reads "today" from the browser's clock: the gateway's clock starts at the real time.
const gateway = await startTestGateway({ database, clock: new ManualClock(Date.now()) });
const browser = await launchBrowser();
try {
  const customer = await createCustomer(gateway, { balance: '100' });
  const keys = await Promise.all([0, 1, 2].map(async () => (await gateway.admin<{ id: string }>('POST', '/keys', { userId: customer.userId })).body.id));
  const seeding = performance.now();
  await seedRequestLog(gateway, customer.userId, keys, ROWS, DAYS);
  console.log(`${database}: ${ROWS.toLocaleString('en-US')} request-log rows in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
  const session = await signIn(gateway, customer);
  const [name, value] = session.cookie.split('=') as [string, string];

  const idle: number[] = [];
  const shown: number[] = [];
  for (let load = 0; load < LOADS; load += 1) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.addCookies([{ name, value, url: gateway.url }]);
    const page = await context.newPage();
    const started = performance.now();
    await page.goto(`${gateway.url}/console`);
    await page.getByRole('table', { name: 'The 10 latest requests' }).waitFor();
    await page.getByRole('img', { name: /Daily spend by model/ }).locator('canvas').first().waitFor();
    shown.push(performance.now() - started);
    await page.waitForLoadState('networkidle');
    // The end of the last response, from the navigation's start (the page's own clock).
    idle.push(await page.evaluate(() => Math.max(...performance.getEntries().map((entry) => ('responseEnd' in entry ? (entry as PerformanceResourceTiming).responseEnd : 0)))));
    if (process.argv.includes('--verbose')) {
      const entries = await page.evaluate(() => performance.getEntries().map((entry) => [entry.name.replace(location.origin, ''), Math.round(entry.startTime), Math.round((entry as PerformanceResourceTiming).responseEnd ?? 0)]));
      console.log(JSON.stringify(entries));
    }
    await context.close();
  }
  const describe = (times: number[]): string => {
    const [first, ...rest] = times;
    rest.sort((a, b) => a - b);
    return `first ${first!.toFixed(0)} ms, median of the next ${rest.length} ${rest[Math.floor(rest.length / 2)]!.toFixed(0)} ms, worst ${Math.max(...times).toFixed(0)} ms`;
  };
  console.log(`${database}: /console to network idle (last response ends): ${describe(idle)}`);
  console.log(`${database}: /console until chart and recent requests are shown: ${describe(shown)}`);
} finally {
  await browser.close();
  await gateway.close();
}
