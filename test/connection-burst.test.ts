import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/config.ts';
import { spawnGateway, type GatewayProcess } from './helpers/gateway-process.ts';

// A burst of new connections reaching a gateway whose event loop is busy: the kernel completes their handshakes and holds
// them for the gateway to accept, up to listen(2)'s backlog. Past it, Linux drops the handshakes and each of those clients
// retries a second later (then 3, then 7). The busy loop is made certain here: the process is stopped (SIGSTOP) while the
// burst arrives, and everything counted is the kernel's doing.

/** More than Node's default backlog (511) holds, and fewer than the gateway's default (4096) and this machine's cap. */
const BURST = 700;
/** Under a second: a dropped handshake's first retry comes only after one. */
const WAIT_MS = 600;

const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'));
const gateways: GatewayProcess[] = [];
after(() => {
  for (const gateway of gateways) gateway.child.kill('SIGKILL');
});

/** Opens BURST connections while the gateway is stopped; how many completed their handshake within WAIT_MS. */
async function handshakesWhileStopped(gateway: GatewayProcess): Promise<number> {
  const pid = gateway.child.pid!;
  const port = Number(new URL(gateway.url).port);
  const sockets: Socket[] = [];
  let connected = 0;
  process.kill(pid, 'SIGSTOP');
  try {
    for (let index = 0; index < BURST; index++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('connect', () => connected++);
      socket.on('error', () => {});
      sockets.push(socket);
    }
    await sleep(WAIT_MS);
    return connected;
  } finally {
    process.kill(pid, 'SIGCONT');
    for (const socket of sockets) socket.destroy();
  }
}

async function answers(gateway: GatewayProcess): Promise<number> {
  return (await fetch(`${gateway.url}/healthz`)).status;
}

test('a burst of 700 new connections to a busy gateway completes its handshakes at once (backlog 4096 by default)', { skip: somaxconn < BURST ? `net.core.somaxconn is ${somaxconn}` : false }, async () => {
  const gateway = await spawnGateway();
  gateways.push(gateway);
  assert.equal(await handshakesWhileStopped(gateway), BURST, 'every connection of the burst is held for the gateway, none left to retry');
  assert.equal(await answers(gateway), 200, 'the gateway serves on after accepting them');
});

test("with Node's default backlog (TOLLGATE_LISTEN_BACKLOG=511) the same burst leaves connections to retry a second later", async () => {
  const gateway = await spawnGateway({ env: { TOLLGATE_LISTEN_BACKLOG: '511' } });
  gateways.push(gateway);
  const connected = await handshakesWhileStopped(gateway);
  assert.ok(connected < BURST, `${connected} of ${BURST} connected`);
  assert.ok(connected >= 511, `the backlog's worth connected (${connected})`);
  assert.equal(await answers(gateway), 200);
});

test('TOLLGATE_LISTEN_BACKLOG must be a whole number from 1 to 65535', () => {
  assert.equal(loadConfig({ TOLLGATE_LOG_LEVEL: 'silent' }).listenBacklog, 4096);
  assert.equal(loadConfig({ TOLLGATE_LISTEN_BACKLOG: '1024' }).listenBacklog, 1024);
  for (const value of ['0', '-1', '65536', '1.5', 'many']) {
    assert.throws(() => loadConfig({ TOLLGATE_LISTEN_BACKLOG: value }), /invalid configuration: TOLLGATE_LISTEN_BACKLOG/, value);
  }
});
