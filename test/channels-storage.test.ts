import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SecretBox } from '../src/lib/secret-box.ts';
import { SqlCatalogRepository } from '../src/storage/catalog-repository.ts';
import { promisify } from 'node:util';
import type { Simulator } from '../simulator/server.ts';
import { errorA, sseData, type JsonRecord } from './helpers/e2e.ts';
import { micros, POSTGRES_URL, startTestGateway, TEST_MASTER_KEY, uniqueSchema, type TestGateway } from './helpers/gateway.ts';
import { withDatabaseAt } from './helpers/migrations.ts';
import { ask, assertChargedOnce, chat, chatCalls, putPool, requestRows, startChannelSimulator, type ChannelView } from './helpers/channels.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'tollgate.js');

interface ProviderView {
  id: string;
  type: string;
  baseUrl: string | null;
  hasApiKey: boolean;
  channels: ChannelView[];
}

/** Cost in micro-units of `tokens` at a price per 1,000 tokens given in micro-units. */
const costMicros = (tokens: number, per1kMicros: bigint): bigint => (BigInt(tokens) * per1kMicros + 500n) / 1000n;

for (const engine of ['sqlite', 'postgres'] as const) {
  describe(`provider channels: admin API, storage and fallbacks (${engine})`, () => {
    let gw: TestGateway;
    const sims: Simulator[] = [];

    before(async () => {
      for (let index = 0; index < 3; index++) sims.push(await startChannelSimulator());
      gw = await startTestGateway({ database: engine });
    });
    after(async () => {
      await gw.close();
      for (const sim of sims) await sim.close();
    });

    test('PUT and GET a provider with channels: every field but the keys, each channel with its health; keys sealed at rest', async () => {
      const [a, b] = sims as [Simulator, Simulator];
      const body = {
        type: 'openai',
        channels: [
          { id: 'east', baseUrl: `${a.url}/v1`, apiKey: 'sk-east-secret-0001', weight: 3, priority: 10 },
          { id: 'west', baseUrl: `${b.url}/v1`, apiKey: 'sk-west-secret-0002', models: ['gpt-4o-mini'] },
          { id: 'spare', baseUrl: `${b.url}/v1`, weight: 0 },
        ],
      };
      const put = await gw.admin<ProviderView>('PUT', '/providers/multi', body);
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const healthy = { state: 'healthy', requests: 0, errors: 0, errorRate: 0, latencyMs: { p50: null, p99: null }, coolingUntil: null };
      assert.deepEqual(put.body, {
        id: 'multi',
        type: 'openai',
        baseUrl: `${a.url}/v1`,
        hasApiKey: true,
        channels: [
          { id: 'east', baseUrl: `${a.url}/v1`, hasApiKey: true, weight: 3, priority: 10, models: null, health: healthy },
          { id: 'west', baseUrl: `${b.url}/v1`, hasApiKey: true, weight: 1, priority: 0, models: ['gpt-4o-mini'], health: healthy },
          { id: 'spare', baseUrl: `${b.url}/v1`, hasApiKey: false, weight: 0, priority: 0, models: null, health: healthy },
        ],
      });
      const got = await gw.admin<ProviderView>('GET', '/providers/multi');
      assert.deepEqual(got.body, put.body);
      const listed = await gw.admin<{ data: ProviderView[] }>('GET', '/providers');
      assert.deepEqual(listed.body.data.find((provider) => provider.id === 'multi'), put.body);
      for (const text of [JSON.stringify(put.body), JSON.stringify(listed.body)]) assert.ok(!text.includes('secret-000'), 'no key is ever shown');

      const stored = await gw.storage.db.selectFrom('provider_channels').select(['id', 'api_key']).where('provider_id', '=', 'multi').orderBy('position').execute();
      assert.deepEqual(stored.map((row) => row.id), ['east', 'west', 'spare']);
      for (const row of stored.slice(0, 2)) assert.match(String(row.api_key), /^v1\./, 'sealed under the master key');
      assert.ok(!JSON.stringify(stored).includes('secret-000'), 'no key in clear in the database');
      const audit = await gw.app.services.audit.list({ targetId: 'multi', limit: 5 });
      assert.ok(!JSON.stringify(audit).includes('secret-000'), 'nor in the audit log');
    });

    test('the one-channel form {baseUrl, apiKey} stays valid; PATCH channels replaces them, PATCH baseUrl changes a one-channel provider only', async () => {
      const [a, b] = sims as [Simulator, Simulator];
      const one = await gw.admin<ProviderView>('PUT', '/providers/single', { type: 'openai', baseUrl: `${a.url}/v1`, apiKey: 'sk-single' });
      assert.equal(one.status, 200, JSON.stringify(one.body));
      assert.deepEqual(
        one.body.channels.map(({ health: _health, ...channel }) => channel),
        [{ id: 'default', baseUrl: `${a.url}/v1`, hasApiKey: true, weight: 1, priority: 0, models: null }],
      );
      const moved = await gw.admin<ProviderView>('PATCH', '/providers/single', { baseUrl: `${b.url}/v1` });
      assert.deepEqual([moved.status, moved.body.baseUrl, moved.body.hasApiKey], [200, `${b.url}/v1`, true]);
      const split = await gw.admin<ProviderView>('PATCH', '/providers/single', { channels: [{ id: 'one', baseUrl: `${a.url}/v1` }, { id: 'two', baseUrl: `${b.url}/v1`, weight: 2 }] });
      assert.deepEqual(split.body.channels.map((channel) => [channel.id, channel.weight, channel.hasApiKey]), [['one', 1, false], ['two', 2, false]]);
      const refused = await gw.admin('PATCH', '/providers/single', { baseUrl: `${a.url}/v1` });
      assert.equal(refused.status, 400);
      assert.match(errorA(refused.body).message, /^baseUrl: provider 'single' has 2 channels/);
    });

    test('PATCH channels keeps the stored key of a channel sent without apiKey (the gateway still sends it upstream); null removes it, a new id has none', async () => {
      const [a, b] = sims as [Simulator, Simulator];
      await putPool(gw, 'keyed', [{ id: 'main', simulator: a }], { id: 'keyed-model' });
      const { key } = await gw.fundedKey();
      const authorizationOfNextCall = async (): Promise<string | undefined> => {
        a.reset();
        const reply = await chat(gw, key, ask('keyed-model'));
        assert.equal(reply.status, 200, reply.text);
        return a.lastRequest('/v1/chat/completions')?.headers.authorization;
      };
      assert.equal(await authorizationOfNextCall(), 'Bearer sk-keyed-main');

      // The weight and priority change, a keyless channel joins: no key is sent, the stored one stays.
      const reweighted = await gw.admin<ProviderView>('PATCH', '/providers/keyed', {
        channels: [{ id: 'main', baseUrl: `${a.url}/v1`, weight: 5, priority: 2 }, { id: 'extra', baseUrl: `${b.url}/v1`, weight: 0 }],
      });
      assert.equal(reweighted.status, 200, JSON.stringify(reweighted.body));
      assert.deepEqual(reweighted.body.channels.map((channel) => [channel.id, channel.weight, channel.priority, channel.hasApiKey]), [['main', 5, 2, true], ['extra', 0, 0, false]]);
      assert.deepEqual((await gw.admin<ProviderView>('GET', '/providers/keyed')).body.channels.map((channel) => channel.hasApiKey), [true, false]);
      assert.equal(await authorizationOfNextCall(), 'Bearer sk-keyed-main', 'the kept key still goes to the vendor');
      const [update] = (await gw.app.services.audit.list({ targetId: 'keyed', action: 'provider.update', limit: 1 })).entries;
      assert.deepEqual(
        (update?.after as { channels: Array<{ id: string; hasApiKey: boolean; weight: number }> }).channels.map((channel) => [channel.id, channel.hasApiKey, channel.weight]),
        [['main', true, 5], ['extra', false, 0]],
        'the audit log says the key is still set',
      );

      // A string replaces the key; the same list sent again without it keeps the new one.
      const rekeyed = await gw.admin<ProviderView>('PATCH', '/providers/keyed', { channels: [{ id: 'main', baseUrl: `${a.url}/v1`, apiKey: 'sk-keyed-replaced' }] });
      assert.deepEqual(rekeyed.body.channels.map((channel) => [channel.id, channel.hasApiKey, channel.weight]), [['main', true, 1]]);
      assert.equal(await authorizationOfNextCall(), 'Bearer sk-keyed-replaced');

      // A renamed channel is a new one: it has no key.
      const renamed = await gw.admin<ProviderView>('PATCH', '/providers/keyed', { channels: [{ id: 'main', baseUrl: `${a.url}/v1` }, { id: 'main-2', baseUrl: `${a.url}/v1`, weight: 0 }] });
      assert.deepEqual(renamed.body.channels.map((channel) => [channel.id, channel.hasApiKey]), [['main', true], ['main-2', false]]);

      // null removes it: the vendor then gets no Authorization header.
      const removed = await gw.admin<ProviderView>('PATCH', '/providers/keyed', { channels: [{ id: 'main', baseUrl: `${a.url}/v1`, apiKey: null }] });
      assert.deepEqual([removed.status, removed.body.hasApiKey, removed.body.channels.map((channel) => channel.hasApiKey)], [200, false, [false]]);
      const stored = await gw.storage.db.selectFrom('provider_channels').select(['id', 'api_key']).where('provider_id', '=', 'keyed').execute();
      assert.deepEqual(stored, [{ id: 'main', api_key: null }]);
      a.reset();
      await chat(gw, key, ask('keyed-model'));
      assert.equal(a.lastRequest('/v1/chat/completions')?.headers.authorization, undefined);

      // PUT still replaces everything: a channel without a key has none.
      await gw.admin('PATCH', '/providers/keyed', { channels: [{ id: 'main', baseUrl: `${a.url}/v1`, apiKey: 'sk-keyed-again' }] });
      const put = await gw.admin<ProviderView>('PUT', '/providers/keyed', { type: 'openai', channels: [{ id: 'main', baseUrl: `${a.url}/v1` }] });
      assert.deepEqual(put.body.channels.map((channel) => channel.hasApiKey), [false]);

      const answers = [reweighted, rekeyed, renamed, removed, put].map((response) => JSON.stringify(response.body)).join();
      assert.ok(!/sk-keyed/.test(answers), 'no answer shows a key');
      assert.ok(!/sk-keyed/.test(JSON.stringify(await gw.app.services.audit.list({ targetId: 'keyed', limit: 20 }))), 'nor the audit log');
    });

    test('bad channels answer 400 naming the field, in shape A', async () => {
      const url = `${sims[0]!.url}/v1`;
      const cases: Array<[JsonRecord, RegExp]> = [
        [{ type: 'openai', channels: [] }, /^channels: /],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url }, { id: 'a', baseUrl: url }] }, /^channels: channel ids must be unique/],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url, weight: -1 }] }, /^channels\[0\]\.weight: /],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url, weight: 1.5 }] }, /^channels\[0\]\.weight: /],
        [{ type: 'openai', channels: [{ id: 'Bad Id', baseUrl: url }] }, /^channels\[0\]\.id: must be 1-64 lowercase/],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: 'not a url' }] }, /^channels\[0\]\.baseUrl: /],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url, models: [] }] }, /^channels\[0\]\.models: /],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url, colour: 'red' }] }, /^channels\[0\]/],
        [{ type: 'openai', channels: [{ id: 'a', baseUrl: url }], baseUrl: url }, /^channels: give either channels or baseUrl/],
        [{ type: 'openai' }, /^baseUrl: is required/],
        [{ type: 'gemini', baseUrl: url }, /^type: /],
      ];
      for (const [body, message] of cases) {
        const response = await gw.admin('PUT', '/providers/invalid', body);
        assert.equal(response.status, 400, `${JSON.stringify(body)} → ${response.status}`);
        assert.match(errorA(response.body).message, message, JSON.stringify(body));
      }
      assert.equal((await gw.admin('GET', '/providers/invalid')).status, 404, 'nothing was stored');
    });

    test('fallbacks: model A with every channel failing is served by model B, billed at B, logged with servedModel B; stream too; charged once', async () => {
      const [a, b, c] = sims as [Simulator, Simulator, Simulator];
      await putPool(gw, 'spare', [{ id: 'c', simulator: c }], { id: 'fallback-b', cost_context: '0.0100', cost_completion: '0.0300' });
      await putPool(gw, 'main', [{ id: 'a', simulator: a }, { id: 'b', simulator: b }], { id: 'primary-a', cost_context: '0.0010', cost_completion: '0.0020', fallbacks: ['fallback-b'] });
      assert.deepEqual((await gw.admin<{ fallbacks: string[] }>('GET', '/models/primary-a')).body.fallbacks, ['fallback-b']);
      const { key, userId } = await gw.fundedKey({ balance: '10.00' });
      for (const sim of [a, b, c]) sim.reset();

      for (const sim of [a, b]) sim.addFault({ status: 503, times: 2, match: { path: '/v1/chat/completions' } });
      const served = await chat(gw, key, ask('primary-a', 'fall back please'));
      assert.equal(served.status, 200, served.text);
      const usage = (served.json as { usage: { prompt_tokens: number; completion_tokens: number; total_cost: number } }).usage;
      const expected = costMicros(usage.prompt_tokens, 10_000n) + costMicros(usage.completion_tokens, 30_000n);
      assert.equal(micros(usage.total_cost), expected, 'billed at the fallback model B');
      const streamed = await chat(gw, key, ask('primary-a', 'fall back streaming', { stream: true, stream_options: { include_usage: true } }));
      assert.equal(streamed.status, 200, streamed.text);
      assert.equal(sseData(streamed.text).at(-1), '[DONE]');
      assert.deepEqual([chatCalls(a), chatCalls(b), chatCalls(c)], [2, 2, 2], 'A tried on both channels each time, then B');

      const rows = (await requestRows(gw, userId)).reverse();
      assert.deepEqual(
        rows.map((row) => [row.model, row.servedModel, row.provider, row.channel, row.attempts, row.status]),
        [
          ['primary-a', 'fallback-b', 'spare', 'c', 3, 200],
          ['primary-a', 'fallback-b', 'spare', 'c', 3, 200],
        ],
      );
      const charges = await assertChargedOnce(gw, userId, rows);
      assert.equal(charges.get(rows[0]!.id), expected);
      const ledgerModels = await gw.storage.db.selectFrom('ledger').select('model').where('account_id', '=', userId).where('kind', '=', 'charge').execute();
      assert.deepEqual(ledgerModels.map((row) => row.model), ['fallback-b', 'fallback-b']);

      for (const sim of [a, b, c]) sim.addFault({ status: 500, times: 1, match: { path: '/v1/chat/completions' } });
      const before = await gw.balance({ userId });
      const failed = await chat(gw, key, ask('primary-a', 'nothing works'));
      assert.equal(failed.status, 502, failed.text);
      assert.equal(await gw.balance({ userId }), before, 'a request no model served is free');
    });

    test('fallbacks are checked: they name other existing models of the same kind', async () => {
      const cases: Array<[JsonRecord, RegExp]> = [
        [{ fallbacks: ['no-such-model'] }, /^fallbacks\[0\]: model 'no-such-model' does not exist/],
        [{ fallbacks: ['primary-a'] }, /^fallbacks\[0\]: must name another model/],
        [{ fallbacks: ['fallback-b', 'fallback-b'] }, /^fallbacks\[1\]: 'fallback-b' is listed twice/],
        [{ fallbacks: ['text-embedding-3-small'] }, /^fallbacks\[0\]: 'text-embedding-3-small' serves embedding, not chat/],
        [{ fallbacks: 'fallback-b' }, /^fallbacks: /],
      ];
      for (const [body, message] of cases) {
        const response = await gw.admin('PATCH', '/models/primary-a', body);
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.match(errorA(response.body).message, message);
      }
    });
  });
}

for (const engine of ['sqlite', 'postgres'] as const) {
  test(`migration 0026 makes a stored provider's URL and sealed key its channel "default" (${engine})`, async () => {
    await withDatabaseAt(engine, '0023-usage-adjustments', async ({ storage, down, migrateToLatest }) => {
      assert.ok(down.results?.some((result) => result.migrationName === '0026-channels' && result.direction === 'Down'));
      const box = new SecretBox(TEST_MASTER_KEY);
      await storage.db.insertInto('providers').values({ id: 'legacy', type: 'anthropic', base_url: 'https://legacy.example.com', api_key: box.seal('sk-legacy-key'), updated_at: 0 }).execute();
      await migrateToLatest();
      const [provider] = await new SqlCatalogRepository(storage.db, box).listProviders();
      assert.deepEqual(provider, { id: 'legacy', type: 'anthropic', channels: [{ id: 'default', baseUrl: 'https://legacy.example.com', apiKey: 'sk-legacy-key', weight: 1, priority: 0, models: null }] });
      const row = await storage.db.selectFrom('providers').select('api_key').where('id', '=', 'legacy').executeTakeFirstOrThrow();
      assert.equal(row.api_key, null, 'the key now lives only in the channel');
    });
  });
}

describe('provider channels across nodes (PostgreSQL)', () => {
  test('channels put on one node route requests on the other within a second', async () => {
    const [a, b] = [await startChannelSimulator(), await startChannelSimulator()];
    const database = { url: `${POSTGRES_URL}?schema=${uniqueSchema()}` };
    const first = await startTestGateway({ database, databaseChanges: true });
    const second = await startTestGateway({ database, databaseChanges: true });
    try {
      const { key } = await first.fundedKey();
      await putPool(first, 'shared', [{ id: 'a', simulator: a }], { id: 'shared-model' });
      const put = await first.admin('PATCH', '/providers/shared', { channels: [{ id: 'b', baseUrl: `${b.url}/v1`, apiKey: 'sk-b' }] });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const started = Date.now();
      let channels: string[] = [];
      while (Date.now() - started < 1_000) {
        channels = (await second.admin<ProviderView>('GET', '/providers/shared')).body.channels?.map((channel) => channel.id) ?? [];
        if (channels.join() === 'b') break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.deepEqual(channels, ['b'], 'the second node saw the new channels within a second');
      const before = chatCalls(b);
      assert.equal((await chat(second, key, ask('shared-model'))).status, 200);
      assert.equal(chatCalls(b), before + 1, 'and routes to them');
    } finally {
      await first.close();
      await second.close();
      await a.close();
      await b.close();
    }
  });
});

describe('tollgate providers (CLI)', () => {
  test('put --channels, show and update --channels call the same service as the admin API; keys never printed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-channels-cli-'));
    const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent' };
    const cli = async (...args: string[]): Promise<ProviderView> => JSON.parse((await run(process.execPath, [BIN, ...args], { env })).stdout) as ProviderView;
    try {
      const channelsFile = join(dir, 'channels.json');
      writeFileSync(channelsFile, JSON.stringify([{ id: 'east', baseUrl: 'https://east.example.com/v1', apiKey: 'sk-cli-east', weight: 2 }, { id: 'west', baseUrl: 'https://west.example.com/v1', priority: -1 }]));
      const put = await cli('providers', 'put', 'pooled', '--type', 'openai', '--channels', `@${channelsFile}`);
      assert.deepEqual(put.channels, [
        { id: 'east', baseUrl: 'https://east.example.com/v1', hasApiKey: true, weight: 2, priority: 0, models: null },
        { id: 'west', baseUrl: 'https://west.example.com/v1', hasApiKey: false, weight: 1, priority: -1, models: null },
      ]);
      const shown = await cli('providers', 'show', 'pooled');
      assert.deepEqual(shown, put);
      assert.ok(!JSON.stringify(shown).includes('sk-cli-east'));
      const reweighted = await cli('providers', 'update', 'pooled', '--channels', JSON.stringify([{ id: 'east', baseUrl: 'https://east.example.com/v1', weight: 5 }, { id: 'west', baseUrl: 'https://west.example.com/v1', apiKey: 'sk-cli-west' }]));
      assert.deepEqual(reweighted.channels.map((channel) => [channel.id, channel.weight, channel.hasApiKey]), [['east', 5, true], ['west', 1, true]], 'east kept its key, west got one');
      assert.ok(!JSON.stringify(reweighted).includes('sk-cli-'));
      const updated = await cli('providers', 'update', 'pooled', '--channels', JSON.stringify([{ id: 'only', baseUrl: 'https://only.example.com/v1' }]));
      assert.deepEqual(updated.channels.map((channel) => channel.id), ['only']);
      await assert.rejects(run(process.execPath, [BIN, 'providers', 'put', 'bad', '--type', 'openai', '--channels', '[{"id":"a","baseUrl":"x"}]'], { env }), (error: { stderr?: string }) => {
        assert.match(String(error.stderr), /channels\[0\]\.baseUrl/);
        return true;
      });

      const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
      try {
        const seen = await gw.admin<ProviderView>('GET', '/providers/pooled');
        assert.deepEqual(seen.body.channels.map((channel) => [channel.id, channel.health.state]), [['only', 'healthy']], 'the gateway reads what the CLI stored');
      } finally {
        await gw.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
