import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { chatOnce, isAlive, spawnGateway, type GatewayProcess } from './helpers/gateway-process.ts';

/** DESIGN §14: a Redis that is down, at start or later, does not stop the gateway; readiness names it until it is back. */

const freePort = (): Promise<number> =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

async function startRedis(port: number): Promise<ChildProcess> {
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  for (let attempt = 0; attempt < 50; attempt += 1) {
    const up = await new Promise<boolean>((done) => {
      const socket = createServer();
      socket.once('error', () => done(true));
      socket.listen(port, '127.0.0.1', () => socket.close(() => done(false)));
    });
    if (up) return redis;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error('redis-server did not start');
}

async function readiness(gateway: GatewayProcess): Promise<{ status: number; redis: boolean | undefined }> {
  const response = await fetch(`${gateway.url}/readyz`);
  const body = (await response.json()) as { checks: Record<string, { ok: boolean }> };
  return { status: response.status, redis: body.checks.redis?.ok };
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (await check()) return;
    await new Promise((done) => setTimeout(done, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Redis outages', () => {
  let simulator: Simulator;
  const gateways: GatewayProcess[] = [];
  const redises: ChildProcess[] = [];
  before(async () => {
    simulator = await startSimulator();
  });
  after(async () => {
    for (const gateway of gateways) if (isAlive(gateway.child.pid!)) gateway.child.kill('SIGKILL');
    for (const redis of redises) redis.kill('SIGKILL');
    await simulator?.close();
  });
  const env = (redisPort: number) => ({
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    OPENAI_API_KEY: 'sim',
    OPENAI_BASE_URL: `${simulator.url}/v1`,
    ANTHROPIC_API_KEY: 'sim',
    ANTHROPIC_BASE_URL: simulator.url,
  });
  const limitedKey = async (gateway: GatewayProcess): Promise<string> => {
    const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'redis', balance: '5.00' });
    const key = await gateway.admin<{ key: string }>('POST', '/keys', { userId: user.body.id, rateLimit: 1000 });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    return key.body.key;
  };

  test('down at start: the gateway starts, serves rate-limited keys and reports redis not ready', async () => {
    const gateway = await spawnGateway({ env: env(await freePort()) });
    gateways.push(gateway);
    const key = await limitedKey(gateway);
    assert.equal((await chatOnce(gateway.url, key)).status, 200);
    assert.deepEqual(await readiness(gateway), { status: 503, redis: false });
  });

  test('down later and back: calls go on throughout, readiness follows Redis', async () => {
    const port = await freePort();
    const redis = await startRedis(port);
    redises.push(redis);
    const gateway = await spawnGateway({ env: env(port) });
    gateways.push(gateway);
    const key = await limitedKey(gateway);
    assert.equal((await chatOnce(gateway.url, key)).status, 200);
    assert.deepEqual(await readiness(gateway), { status: 200, redis: true });
    redis.kill('SIGKILL');
    await until(async () => (await readiness(gateway)).redis === false, 'readiness to name redis');
    for (let call = 0; call < 5; call += 1) assert.equal((await chatOnce(gateway.url, key)).status, 200, 'served while Redis is down');
    redises.push(await startRedis(port));
    await until(async () => (await readiness(gateway)).status === 200, 'readiness after Redis is back');
    assert.equal((await chatOnce(gateway.url, key)).status, 200);
    assert.ok(isAlive(gateway.child.pid!));
  });
});
