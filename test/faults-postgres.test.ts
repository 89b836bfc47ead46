import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { chatOnce, isAlive, loadAt, microsOf, spawnGateway, type Answer, type GatewayProcess } from './helpers/gateway-process.ts';
import { POSTGRES_URL } from './helpers/gateway.ts';
import { onServer, serverUrl, terminateBackends } from './helpers/postgres-server.ts';

/**
 * Failure injection on PostgreSQL with gateways as real processes (issue 11): killed backends, a read-only database, a database
 * that goes away and comes back, and two processes spending one balance. Each asserts balance = Σ ledger and that no answered
 * charge was lost, and that the request log has exactly one row per answered request.
 */


const vendorEnv = (simulator: Simulator): Record<string, string> => ({
  OPENAI_API_KEY: 'sim-openai',
  OPENAI_BASE_URL: `${simulator.url}/v1`,
  ANTHROPIC_API_KEY: 'sim-anthropic',
  ANTHROPIC_BASE_URL: simulator.url,
});

interface LedgerFacts {
  balance: bigint;
  sum: bigint;
  charges: Map<string, bigint>;
  duplicateRequestIds: number;
}

/** Reads the account straight from the database: its balance, the sum of its ledger and its charges by request id (micro-units). */
async function ledgerFacts(database: string, userId: string, schema?: string): Promise<LedgerFacts> {
  return onServer(async (client) => {
    if (schema) await client.query(`set search_path = ${schema}`);
    const balance = await client.query<{ balance: string }>('select cast(balance_nano as text) as balance from users where id = $1', [userId]);
    const rows = await client.query<{ request_id: string | null; amount: string; kind: string }>(
      'select request_id, cast(amount_nano as text) as amount, kind from ledger where account_type = $1 and account_id = $2',
      ['user', userId],
    );
    const charges = new Map<string, bigint>();
    let duplicateRequestIds = 0;
    let sum = 0n;
    for (const row of rows.rows) {
      sum += BigInt(row.amount);
      if (row.kind !== 'charge' || row.request_id === null) continue;
      if (charges.has(row.request_id)) duplicateRequestIds += 1;
      charges.set(row.request_id, BigInt(row.amount) / 1_000n);
    }
    return { balance: BigInt(balance.rows[0]!.balance), sum, charges, duplicateRequestIds };
  }, database);
}

async function fundedKey(gateway: GatewayProcess, balance: string): Promise<{ key: string; userId: string }> {
  const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'fault test', balance });
  assert.equal(user.status, 200, JSON.stringify(user.body));
  const key = await gateway.admin<{ key: string }>('POST', '/keys', { userId: user.body.id });
  assert.equal(key.status, 200, JSON.stringify(key.body));
  return { key: key.body.key, userId: user.body.id };
}

async function waitForReadiness(gateway: GatewayProcess, ready: boolean, timeoutMs: number, failing?: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await fetch(`${gateway.url}/readyz`).catch(() => undefined);
    const body = response ? ((await response.json()) as Record<string, unknown>) : {};
    // Several checks may fail at once (the request log's writer hits the same database); wait for the one named, if any.
    const named = failing === undefined || (body.checks as Record<string, { ok: boolean }> | undefined)?.[failing]?.ok === false;
    if (response && (response.status === 200) === ready && named) return body;
    if (Date.now() > deadline) throw new Error(`readiness did not become ${ready} within ${timeoutMs} ms: ${JSON.stringify(body)}; alive: ${isAlive(gateway.child.pid!)}; output: ${gateway.output.join('').slice(-3000)}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** Every 200 the clients saw is one ledger charge of exactly the cost shown; nothing else was charged; balance = Σ ledger. */
function assertNoChargeLost(answers: readonly Answer[], facts: LedgerFacts, initial: bigint): void {
  const answered = answers.filter((answer) => answer.status === 200);
  assert.ok(answered.length > 0, 'calls were answered');
  const missing = answered.filter((answer) => !facts.charges.has(answer.requestId));
  assert.equal(missing.length, 0, `answered charges lost: ${missing.length} of ${answered.length}`);
  for (const answer of answered) assert.equal(facts.charges.get(answer.requestId), -microsOf(answer.cost), `charge of ${answer.requestId}`);
  assert.equal(facts.charges.size, answered.length, 'no charge for a call that was not answered with 200');
  assert.equal(facts.duplicateRequestIds, 0, 'no charge written twice');
  assert.equal(facts.balance, facts.sum, 'balance = Σ ledger');
  const spent = answered.reduce((sum, answer) => sum + microsOf(answer.cost), 0n);
  assert.equal(facts.balance / 1_000n, initial - spent, 'balance = initial − Σ answered costs');
}

interface RequestLogFacts {
  /** Rows by request id: how many, and the cost of the last one (nano-units). */
  rows: Map<string, { count: number; cost: bigint }>;
  /** Σ of the rows' costs and Σ of the account's daily rollups (nano-units). */
  rowCost: bigint;
  rollupCost: bigint;
  rollupRequests: number;
}

/** The account's request-log rows and rollups, straight from the database. */
async function requestLogFacts(database: string, userId: string): Promise<RequestLogFacts> {
  return onServer(async (client) => {
    const rows = await client.query<{ id: string; cost: string }>(
      "select id, cast(cost_nano as text) as cost from request_log where account_type = 'user' and account_id = $1",
      [userId],
    );
    const byId = new Map<string, { count: number; cost: bigint }>();
    let rowCost = 0n;
    for (const row of rows.rows) {
      byId.set(row.id, { count: (byId.get(row.id)?.count ?? 0) + 1, cost: BigInt(row.cost) });
      rowCost += BigInt(row.cost);
    }
    const rollups = await client.query<{ cost: string | null; requests: string | null }>(
      "select cast(sum(cost_nano) as text) as cost, cast(sum(requests) as text) as requests from usage_daily where account_type = 'user' and account_id = $1",
      [userId],
    );
    return { rows: byId, rowCost, rollupCost: BigInt(rollups.rows[0]?.cost ?? '0'), rollupRequests: Number(rollups.rows[0]?.requests ?? '0') };
  }, database);
}

/** Every answered request has exactly one row of its cost; the rollups moved once per row (batches retried after a lost commit skip rows already written). */
function assertRequestLogWhole(answers: readonly Answer[], facts: RequestLogFacts): void {
  const missing = answers.filter((answer) => !facts.rows.has(answer.requestId));
  assert.equal(missing.length, 0, `request-log rows lost: ${missing.length} of ${answers.length}`);
  const doubled = [...facts.rows].filter(([, row]) => row.count !== 1);
  assert.deepEqual(doubled, [], 'no request logged twice');
  assert.equal(facts.rows.size, answers.length, 'no row for a request that was not made');
  for (const answer of answers) if (answer.status === 200) assert.equal(facts.rows.get(answer.requestId)!.cost / 1_000n, microsOf(answer.cost), `row cost of ${answer.requestId}`);
  assert.equal(facts.rollupRequests, answers.length, 'the rollups count each request once');
  assert.equal(facts.rollupCost, facts.rowCost, 'the rollups cost what the rows cost');
}

describe('database faults under load (PostgreSQL, gateway as a process)', () => {
  const database = `tg_fault_${randomBytes(5).toString('hex')}`;
  let simulator: Simulator;
  let gateway: GatewayProcess;

  before(async () => {
    await onServer((client) => client.query(`create database ${database}`));
    simulator = await startSimulator();
    simulator.options.latencyMs = 2;
    gateway = await spawnGateway({ env: { ...vendorEnv(simulator), DATABASE_URL: serverUrl(database) } });
  });

  after(async () => {
    if (gateway && isAlive(gateway.child.pid!)) gateway.child.kill('SIGKILL');
    await simulator?.close();
    await onServer((client) => client.query(`alter database ${database} with allow_connections true`)).catch(() => undefined);
    await onServer((client) => client.query(`drop database if exists ${database} with (force)`));
  });

  test('killed backends, a read-only database and a database that goes away: the gateway serves on, loses no charge, reports readiness', async () => {
    const { key, userId } = await fundedKey(gateway, '100.00');
    const initial = microsOf('100.00');
    const warmup = await chatOnce(gateway.url, key);
    assert.equal(warmup.status, 200, 'warm-up call');
    const load = loadAt(gateway.url, key, 80, 16);
    const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

    // Killed backends, over and over, while charges are being written.
    for (let round = 0; round < 10; round += 1) {
      await terminateBackends(database);
      await pause(100);
    }

    // Read-only: ledger writes fail, charges stay queued, readiness names the ledger.
    await onServer((client) => client.query(`alter database ${database} set default_transaction_read_only = on`));
    await terminateBackends(database);
    const failing = await waitForReadiness(gateway, false, 10_000, 'ledger');
    const checks = failing.checks as Record<string, { ok: boolean }>;
    assert.equal(checks.ledger?.ok, false, `readiness names the ledger: ${JSON.stringify(failing)}`);
    await pause(1_000);
    await onServer((client) => client.query(`alter database ${database} reset default_transaction_read_only`));
    await terminateBackends(database);
    await waitForReadiness(gateway, true, 20_000);

    // The database goes away (no connection possible) and comes back: a restart as the gateway sees it.
    await onServer((client) => client.query(`alter database ${database} with allow_connections false`));
    await terminateBackends(database);
    const down = await waitForReadiness(gateway, false, 10_000, 'database');
    assert.equal((down.checks as Record<string, { ok: boolean }>).database?.ok, false, 'readiness names the database');
    await pause(2_000);
    await onServer((client) => client.query(`alter database ${database} with allow_connections true`));
    await waitForReadiness(gateway, true, 20_000);

    load.stop();
    const answers = await load.answers;
    assert.ok(isAlive(gateway.child.pid!), 'the gateway is still running');
    assert.ok(answers.filter((answer) => answer.status === 200).length >= 50, 'calls were served throughout');
    assert.deepEqual([...new Set(answers.map((answer) => answer.status))].filter((status) => status !== 200), [], 'every call was answered 200');

    gateway.child.kill('SIGTERM');
    const exit = await gateway.exited;
    assert.equal(exit.code, 0, `clean stop: ${gateway.output.join('').slice(-2000)}`);
    const facts = await ledgerFacts(database, userId);
    assertNoChargeLost([warmup, ...answers], facts, initial);
    // The request log rides the same faults with its own batched writer: every answered request has exactly one row.
    assert.match(gateway.output.join(''), /request log write failed; will retry/, 'request-log writes did fail during the run');
    assertRequestLogWhole([warmup, ...answers], await requestLogFacts(database, userId));
  });
});

describe('two gateway processes spending one balance (PostgreSQL)', () => {
  const schema = `tg_fault_${randomBytes(5).toString('hex')}`;
  let simulator: Simulator;
  let first: GatewayProcess;
  let second: GatewayProcess;

  before(async () => {
    simulator = await startSimulator();
    simulator.options.latencyMs = 3;
    const env = { ...vendorEnv(simulator), DATABASE_URL: `${POSTGRES_URL}?schema=${schema}` };
    first = await spawnGateway({ env });
    second = await spawnGateway({ env, adminToken: first.adminToken });
  });

  after(async () => {
    for (const gateway of [first, second]) if (gateway && isAlive(gateway.child.pid!)) gateway.child.kill('SIGKILL');
    await simulator?.close();
    await onServer((client) => client.query(`drop schema if exists ${schema} cascade`), 'test');
  });

  test('they overdraw it by at most the calls in flight, and every answered charge is in the ledger', async () => {
    // Learn the price of one call, then leave the account exactly 150 calls' worth.
    const { key, userId } = await fundedKey(first, '1.00');
    const probe = await chatOnce(first.url, key);
    assert.equal(probe.status, 200);
    const cost = microsOf(probe.cost);
    const target = cost * 150n;
    const current = microsOf('1.00') - cost;
    const adjust = await first.admin('POST', '/balance', { userId, amount: ((Number(target - current) / 1e6).toFixed(6)) });
    assert.equal(adjust.status, 200, JSON.stringify(adjust.body));
    const initial = microsOf((adjust.body as { balance: string }).balance);
    assert.equal(initial, target);

    const perNode = 4;
    const answers: Answer[] = [];
    const spend = async (gateway: GatewayProcess): Promise<void> => {
      for (;;) {
        const answer = await chatOnce(gateway.url, key);
        answers.push(answer);
        if (answer.status !== 200) return;
      }
    };
    await Promise.all([first, second].flatMap((gateway) => Array.from({ length: perNode }, () => spend(gateway))));
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.ok(refused.every((answer) => answer.status === 402), `only 402 refuses: ${refused.map((answer) => answer.status).join(',')}`);

    for (const gateway of [first, second]) gateway.child.kill('SIGTERM');
    assert.equal((await first.exited).code, 0);
    assert.equal((await second.exited).code, 0);
    const facts = await ledgerFacts('test', userId, schema);
    assertNoChargeLost([{ status: 200, requestId: probe.requestId, cost: probe.cost }, ...answers], facts, initial + cost);
    const overdraft = -(facts.balance / 1_000n);
    const inFlight = BigInt(2 * perNode) * cost;
    assert.ok(overdraft <= inFlight, `overdraft ${overdraft} µ exceeds the ${2 * perNode} calls in flight (${inFlight} µ)`);
    assert.ok(answers.filter((answer) => answer.status === 200).length >= 140, 'the balance was spent, not refused early');
  });
});
