import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_CATALOG, readCatalogFile } from '../src/runtime.ts';
import { startTestGateway } from './helpers/gateway.ts';

interface AdminModel {
  id: string;
  title: string;
  cost_context: string;
  cost_completion: string;
  deprecated_at: string | null;
  deprecation_redirect_to: string | null;
}

/** The shipped catalog with the vendor's newer title for gpt-4o-mini (what a later catalog release would bring). */
const newerCatalog = () =>
  readCatalogFile(DEFAULT_CATALOG).map((model) => (model.id === 'gpt-4o-mini' ? { ...model, title: 'GPT-4o mini (2026)' } : model));

test("models import keeps the operator's prices and retirement, still updates vendor fields, and --overwrite replaces them", async () => {
  const gw = await startTestGateway();
  try {
    const model = async (id: string): Promise<AdminModel> => {
      const list = await gw.admin<{ data: AdminModel[] }>('GET', '/models');
      return list.body.data.find((entry) => entry.id === id)!;
    };
    const patched = await gw.admin('PATCH', '/models/gpt-4o-mini', { cost_context: '0.0009', deprecated_at: '2027-01-01T00:00:00Z', deprecation_redirect_to: 'gpt-4.1' });
    assert.equal(patched.status, 200);

    await gw.app.services.catalog.importModels(newerCatalog());
    const kept = await model('gpt-4o-mini');
    assert.equal(kept.cost_context, '0.0009', "the operator's price survives the import");
    assert.equal(kept.deprecation_redirect_to, 'gpt-4.1', "the operator's retirement survives the import");
    assert.equal(Date.parse(kept.deprecated_at!), Date.parse('2027-01-01T00:00:00Z'));
    assert.equal(kept.cost_completion, '0.0006', 'a price the operator did not touch follows the catalog');
    assert.equal(kept.title, 'GPT-4o mini (2026)', 'vendor fields are updated');

    // A second edit adds to what the operator owns; an import still keeps all of it.
    await gw.admin('PATCH', '/models/gpt-4o-mini', { cost_completion: '0.0011' });
    await gw.app.services.catalog.importModels(newerCatalog());
    assert.deepEqual([(await model('gpt-4o-mini')).cost_context, (await model('gpt-4o-mini')).cost_completion], ['0.0009', '0.0011']);

    await gw.app.services.catalog.importModels(readCatalogFile(DEFAULT_CATALOG), { overwrite: true });
    const replaced = await model('gpt-4o-mini');
    assert.equal(replaced.cost_context, '0.0002');
    assert.equal(replaced.cost_completion, '0.0006');
    assert.equal(replaced.deprecated_at, null);
    assert.equal(replaced.title, 'GPT-4o mini');
    // After an overwrite the catalog owns the model again.
    await gw.app.services.catalog.importModels(newerCatalog());
    assert.equal((await model('gpt-4o-mini')).title, 'GPT-4o mini (2026)');
  } finally {
    await gw.close();
  }
});

test('models import on PostgreSQL keeps an operator PUT price as well', async () => {
  const gw = await startTestGateway({ database: 'postgres' });
  try {
    const current = (await gw.admin<{ data: Array<Record<string, unknown>> }>('GET', '/models')).body.data.find((entry) => entry.id === 'gpt-4.1')!;
    const put = await gw.admin('PUT', '/models/gpt-4.1', { kind: 'chat', provider: 'openai', cost_context: '0.5', cost_completion: '1.5', max_capacity: current.max_capacity });
    assert.equal(put.status, 200);
    await gw.app.services.catalog.importModels(readCatalogFile(DEFAULT_CATALOG));
    const after = (await gw.admin<{ data: AdminModel[] }>('GET', '/models')).body.data.find((entry) => entry.id === 'gpt-4.1')!;
    assert.deepEqual([after.cost_context, after.cost_completion], ['0.5000', '1.5000']);
  } finally {
    await gw.close();
  }
});

test("importing the current catalog adds the new vendor ids and keeps an operator's edit of an existing one", async () => {
  const gw = await startTestGateway();
  try {
    const ids = async (): Promise<AdminModel[]> => (await gw.admin<{ data: AdminModel[] }>('GET', '/models')).body.data;
    const edited = await gw.admin('PATCH', '/models/claude-opus-4-8', { cost_context: '0.0042', deprecated_at: '2027-06-01T00:00:00Z', deprecation_redirect_to: 'claude-opus-4-5' });
    assert.equal(edited.status, 200);
    await gw.app.services.catalog.importModels(readCatalogFile(DEFAULT_CATALOG));
    const models = await ids();
    for (const id of ['claude-opus-4-8', 'claude-sonnet-4-6', 'claude-haiku-4-5-20251001', 'gpt-6.1-sol', 'gpt-5.5']) {
      assert.ok(models.some((model) => model.id === id), `${id} is in the catalog`);
    }
    const opus = models.find((model) => model.id === 'claude-opus-4-8')!;
    assert.equal(opus.cost_context, '0.0042');
    assert.equal(opus.cost_completion, '0.0250', 'the untouched price follows the catalog');
    assert.equal(opus.deprecation_redirect_to, 'claude-opus-4-5');
    assert.equal(Date.parse(opus.deprecated_at!), Date.parse('2027-06-01T00:00:00Z'));
  } finally {
    await gw.close();
  }
});
