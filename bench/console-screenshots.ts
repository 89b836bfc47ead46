// `npm run screenshots:console`: PNGs of the web console's main pages for docs/screenshots/, taken in Chromium against a
// gateway on the simulator with a little real traffic (two keys, a few calls, an org), at 1280 px and at 375 px.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ManualClock } from '../src/lib/clock.ts';
import { launchBrowser } from '../test/helpers/browser.ts';
import { startTestGateway } from '../test/helpers/gateway.ts';
import { createCustomer, signIn } from '../test/helpers/management.ts';

const OUT = join(import.meta.dirname, '..', 'docs', 'screenshots');
mkdirSync(OUT, { recursive: true });

const gateway = await startTestGateway({ clock: new ManualClock(Date.now()) });
const browser = await launchBrowser();
try {
  // An operator too, so the operator pages can be shown with the same session.
  const customer = await createCustomer(gateway, { balance: '25.00', name: 'Ada Lovelace', operator: true });
  await createCustomer(gateway, { balance: '3.50', name: 'Charles Babbage' });
  const session = await signIn(gateway, customer);
  const org = await gateway.admin<{ id: string }>('POST', '/orgs', { name: 'Analytical Engines', ownerId: customer.userId, balance: '100.00' });
  const created = await session.call<{ key: string }>('POST', '/keys', { name: 'laptop', limit: { amount: '5.00', period: 'month' } });
  await session.call('POST', '/keys', { name: 'ci', allowedModels: ['gpt-4o-mini'] });
  for (const [model, text] of [['gpt-4o-mini', 'Hello'], ['gpt-4o', 'Write a haiku'], ['gpt-4o-mini', 'Summarise this'], ['claude-sonnet-4-5', 'Explain caching']] as const) {
    await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: text }] }),
    });
  }
  await session.call('POST', '/assistants', {
    mention: 'haiku-coach',
    title: 'Haiku coach',
    subtitle: 'Five, seven, five',
    description: 'Turns any topic into a haiku and explains the cut.',
    instruction: 'Answer with one haiku, then one sentence on its kireji.',
    modelId: 'gpt-4o-mini',
    access: { isPrivate: false },
  });
  const base = await session.call<{ id: string }>('POST', '/knowledge', { title: 'Product manual' });
  await session.call('POST', `/knowledge/${base.body.id}/documents`, { title: 'Getting started', text: 'Tollgate is a gateway to hosted AI models. Create a key, then call /v1/chat/completions with it.' });
  await gateway.app.services.requestLog.flush();
  const [name, value] = session.cookie.split('=') as [string, string];

  const shoot = async (path: string, file: string, width: number, ready: string) => {
    const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1 });
    await context.addCookies([{ name, value, url: gateway.url }]);
    const page = await context.newPage();
    await page.goto(`${gateway.url}${path}`);
    await page.getByRole('heading', { name: ready, level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(OUT, file), fullPage: true });
    await context.close();
    console.log(`docs/screenshots/${file}`);
  };
  await shoot('/', 'storefront.png', 1280, 'Models and prices');
  await shoot('/console', 'console-overview.png', 1280, 'Overview');
  await shoot('/console/keys', 'console-keys.png', 1280, 'API keys');
  await shoot('/console/usage', 'console-usage.png', 1280, 'Usage');
  await shoot('/console/requests', 'console-requests.png', 1280, 'Requests');
  await shoot('/console/billing', 'console-billing.png', 1280, 'Billing');
  await shoot(`/console/orgs/${org.body.id}/api`, 'console-org-api.png', 1280, 'Analytical Engines');
  await shoot('/console/assistants', 'console-assistants.png', 1280, 'Assistants');
  await shoot('/a/haiku-coach', 'assistant-page.png', 1280, 'Haiku coach');
  await shoot('/console/knowledge', 'console-knowledge.png', 1280, 'Knowledge bases');
  await shoot('/console/tasks', 'console-tasks.png', 1280, 'Tasks');
  await shoot('/console/admin/users', 'operator-users.png', 1280, 'Users');
  await shoot('/console/admin/models', 'operator-models.png', 1280, 'Models');
  await shoot('/console/admin/audit', 'operator-audit.png', 1280, 'Audit log');
  await shoot('/console', 'console-overview-375.png', 375, 'Overview');
  await shoot('/a/haiku-coach', 'assistant-page-375.png', 375, 'Haiku coach');
} finally {
  await browser.close();
  await gateway.close();
}
