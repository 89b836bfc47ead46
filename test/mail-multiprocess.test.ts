import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { chatOnce, isAlive, microsOf, spawnGateway, type Answer, type GatewayProcess } from './helpers/gateway-process.ts';
import { POSTGRES_URL, TEST_MASTER_KEY } from './helpers/gateway.ts';
import { addressesOf, startMailServer, type TestMailServer } from './helpers/mail-server.ts';

/**
 * Key-limit mail across processes (DESIGN §15, issue 17): two gateway processes on one PostgreSQL database share one key,
 * calls are spread over both, and its spend crosses 80 % and then 100 % of its limit. Neither process sees the other's
 * calls in its own spend book, so the levels are decided where the charges are written: exactly one 80 % message and one
 * 100 % message reach the mail server.
 */

const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('key-limit mail with two gateway processes on one PostgreSQL', () => {
  const schema = `tg_mailmp_${randomBytes(5).toString('hex')}`;
  let simulator: Simulator;
  let mail: TestMailServer;
  let first: GatewayProcess;
  let second: GatewayProcess;

  before(async () => {
    [simulator, mail] = await Promise.all([startSimulator(), startMailServer()]);
    const env = {
      OPENAI_API_KEY: 'sim-openai',
      OPENAI_BASE_URL: `${simulator.url}/v1`,
      ANTHROPIC_API_KEY: 'sim-anthropic',
      ANTHROPIC_BASE_URL: simulator.url,
      DATABASE_URL: `${POSTGRES_URL}?schema=${schema}`,
      TOLLGATE_SMTP_URL: mail.url,
      TOLLGATE_MAIL_FROM: 'Tollgate <no-reply@tollgate.test>',
      // One master key, as a deployment's nodes share it: a message sealed by one process is sent by whichever leases its job.
      TOLLGATE_SECRET_KEY: TEST_MASTER_KEY.toString('hex'),
    };
    first = await spawnGateway({ env });
    second = await spawnGateway({ env, adminToken: first.adminToken });
  });

  after(async () => {
    for (const gateway of [first, second]) if (gateway && isAlive(gateway.child.pid!)) gateway.child.kill('SIGKILL');
    await simulator?.close();
    await mail?.close();
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`).finally(() => client.end());
  });

  test('one key spent through both processes past 80 % and 100 % of its limit: one 80 % mail and one 100 % mail', async () => {
    const email = `owner-${randomBytes(4).toString('hex')}@example.com`;
    const user = await first.admin<{ id: string }>('POST', '/users', { name: 'limit owner', email, password: `pw-${randomBytes(8).toString('hex')}`, balance: '50.00' });
    assert.equal(user.status, 200, JSON.stringify(user.body));
    // The price of one call, from a key without a limit.
    const probeKey = await first.admin<{ key: string }>('POST', '/keys', { userId: user.body.id, name: 'probe' });
    const probe = await chatOnce(first.url, probeKey.body.key);
    assert.equal(probe.status, 200);
    const cost = microsOf(probe.cost);
    assert.ok(cost > 0n);

    // A limit of 20 calls: 80 % is the 16th call, 100 % the 20th (a ledger batch that jumps past both mails both).
    const limitMicros = cost * 20n;
    const limit = `${limitMicros / 1_000_000n}.${(limitMicros % 1_000_000n).toString().padStart(6, '0')}`;
    const created = await first.admin<{ id: string; key: string }>('POST', '/keys', { userId: user.body.id, name: 'shared budget', limit: { amount: limit, period: 'month' } });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { key } = created.body;

    // Rounds of one call on each process at the same time, until the key's spend has passed its limit.
    const answers: Answer[] = [];
    for (let round = 0; round < 14; round += 1) {
      answers.push(...(await Promise.all([chatOnce(first.url, key), chatOnce(second.url, key)])));
    }
    const served = answers.filter((answer) => answer.status === 200);
    assert.ok(served.length >= 20, `the key spent its limit: ${served.length} calls served`);
    assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 402), `only 402 refuses: ${answers.map((answer) => answer.status).join(',')}`);

    const subjects = () => mail.to(email).map((message) => message.subject ?? '');
    const deadline = Date.now() + 20_000;
    while (!(subjects().some((subject) => / 80 % /.test(subject)) && subjects().some((subject) => / 100 % /.test(subject)))) {
      assert.ok(Date.now() < deadline, `both alerts arrive; got: ${JSON.stringify(subjects())}; output: ${first.output.join("").slice(-1500)} ${second.output.join("").slice(-1500)}`);
      await pause(100);
    }
    // Both processes keep running their mail jobs: give them time to send anything more they might have queued.
    await pause(2_000);
    const alerts = mail.messages.filter((message) => addressesOf(message).includes(email));
    assert.deepEqual(
      alerts.map((message) => message.subject).sort(),
      [`API key "shared budget" (${created.body.id}): 100 % of its limit`, `API key "shared budget" (${created.body.id}): 80 % of its limit`],
      'exactly one message per level',
    );
    const eighty = alerts.find((message) => / 80 % /.test(message.subject ?? ''))!;
    assert.match(eighty.text ?? '', /has used 80 % of its spend limit/);
  });
});
