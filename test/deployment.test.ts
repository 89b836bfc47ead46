import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { npmStartNode } from '../bench/targets.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer } from './helpers/management.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string): string => readFileSync(`${root}/${path}`, 'utf8');

/** The environment variables the gateway reads (the names of its configuration schema). */
function variablesTheGatewayReads(): Set<string> {
  const source = read('src/config/config.ts');
  const schema = source.slice(source.indexOf('const environmentSchema'), source.indexOf('});', source.indexOf('const environmentSchema')));
  return new Set([...schema.matchAll(/^\s+([A-Z][A-Z0-9_]+):/gm)].map((match) => match[1]!));
}

interface Instruction {
  keyword: string;
  args: string;
}

/** Dockerfile instructions with line continuations joined and comments dropped; one list per stage. */
function dockerfileStages(text: string): Instruction[][] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
  const stages: Instruction[][] = [];
  for (const line of lines) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (keyword!.toUpperCase() === 'FROM') stages.push([]);
    assert.ok(stages.length > 0, `instruction before FROM: ${line}`);
    stages.at(-1)!.push({ keyword: keyword!.toUpperCase(), args: args! });
  }
  return stages;
}

describe('container deployment files (DESIGN §15)', () => {
  test('the Dockerfile: a build stage, a runtime stage with production dependencies only, a non-root user, HEALTHCHECK on /readyz', () => {
    const stages = dockerfileStages(read('Dockerfile'));
    assert.ok(stages.length >= 2, 'multi-stage');
    const build = stages[0]!;
    const runtime = stages.at(-1)!;
    // The native addons (better-sqlite3) are compiled in the build stage for its node's ABI and copied to the runtime stage:
    // both stages must run the same major, or the runtime cannot load them. .ci/container-node runs the suite on that major.
    const nodeMajor = (stage: Instruction[]): string | undefined => /^node:(\d+)\b/.exec(stage[0]!.args)?.[1];
    assert.ok(nodeMajor(runtime), `the runtime stage is an official node image: ${runtime[0]!.args}`);
    assert.equal(nodeMajor(build), nodeMajor(runtime), 'the build stage compiles the addons for the runtime\'s node');
    assert.ok(build.some((step) => step.keyword === 'RUN' && /npm ci\b/.test(step.args) && /npm prune --omit=dev/.test(step.args)), 'dev dependencies pruned');
    assert.ok(!runtime.some((step) => step.keyword === 'RUN' && /npm (ci|install)/.test(step.args)), 'the runtime stage installs nothing more');
    // A dependency of the project's own (native/malloc-trim) is a link from node_modules into the tree: the runtime stage
    // must copy what it links to, or the link dangles there.
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { link?: boolean; resolved?: string }> };
    const copied = runtime.filter((step) => step.keyword === 'COPY').map((step) => step.args.split(/\s+/).at(-1)!.replace(/^\.\//, ''));
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!entry.link) continue;
      const top = entry.resolved!.split('/')[0]!;
      assert.ok(copied.includes(top), `${path} links to ${entry.resolved}: the runtime stage copies ${top}/ (it copies ${copied.join(', ')})`);
    }
    const user = runtime.filter((step) => step.keyword === 'USER').at(-1);
    assert.ok(user && !/^(root|0)(:|$)/.test(user.args), `runs as a non-root user: ${user?.args}`);
    const health = runtime.find((step) => step.keyword === 'HEALTHCHECK');
    assert.ok(health && health.args.includes('/readyz'), 'HEALTHCHECK asks /readyz');
    const command = runtime.find((step) => step.keyword === 'CMD');
    assert.ok(command && JSON.parse(command.args).includes('dist/main.js'), 'exec form, node runs the bundle (signals reach it)');
    const env = runtime.filter((step) => step.keyword === 'ENV').map((step) => step.args).join(' ');
    // The container runs node as `npm start` does (read as the bench reads it): the same flags (the young generation's
    // size, --expose-gc for the collection that hands memory back once traffic pauses or falls) and the same malloc arenas.
    const start = npmStartNode(root);
    const flags = (args: readonly string[]): string[] => args.filter((arg) => arg.startsWith('--')).sort();
    assert.deepEqual(flags(JSON.parse(command.args) as string[]), flags(start.flags), 'the container\'s node flags are npm start\'s');
    assert.ok(flags(JSON.parse(command.args) as string[]).includes('--expose-gc'), 'the idle collection can run');
    assert.equal(/MALLOC_ARENA_MAX=(\d+)/.exec(env)?.[1], start.environment.MALLOC_ARENA_MAX, 'the same malloc arenas as npm start');
    const known = variablesTheGatewayReads();
    for (const [, name] of env.matchAll(/([A-Z][A-Z0-9_]+)=/g)) {
      assert.ok(known.has(name!) || ['NODE_ENV', 'MALLOC_ARENA_MAX'].includes(name!), `ENV ${name} is a variable the gateway reads`);
    }
    assert.match(env, /HOST=0\.0\.0\.0/, 'listens beyond the container');
  });

  test("the bundle npm start builds: ASCII (V8 keeps a script's source one byte a character only then), Kysely inside it, other packages outside, a thinned map that finds a function's source line", () => {
    const out = mkdtempSync(join(tmpdir(), 'tollgate-bundle-'));
    try {
      const build = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.build!;
      for (const step of build.replaceAll('dist/main.js', join(out, 'main.js')).split(' && ')) {
        const [command, ...args] = step.split(' ');
        execFileSync(command === 'node' ? process.execPath : join(root, 'node_modules', '.bin', command!), args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
      }
      const bundle = readFileSync(join(out, 'main.js'));
      const first = bundle.findIndex((byte) => byte > 0x7f);
      assert.equal(first, -1, `a byte above 0x7f at ${first}: ${bundle.subarray(Math.max(0, first - 80), first + 40).toString()}`);
      const text = bundle.toString();
      // Kysely's ~280 ESM modules cost ~6 MB of RSS and ~0.2 s of start loaded one by one; bundled, only what is used.
      const imported = new Set([...text.matchAll(/\bfrom"([^".][^"]*)"/g)].map((match) => match[1]));
      assert.ok(!imported.has('kysely'), 'kysely is bundled, not imported');
      assert.match(text, /\bSelectQueryBuilderImpl\b/, "Kysely's query builder is in the bundle");
      for (const external of ['fastify', 'undici', 'zod', 'better-sqlite3']) assert.ok(imported.has(external), `${external} stays an import of node_modules`);
      // The map is thinned (bin/thin-source-map.mjs) and still leads a stack frame to its source file and line.
      const map = JSON.parse(readFileSync(join(out, 'main.js.map'), 'utf8')) as { names: string[]; mappings: string };
      assert.deepEqual(map.names, []);
      const at = text.indexOf('function handBackMemory(');
      assert.ok(at > 0, 'the bundle holds handBackMemory');
      const preceding = text.slice(0, at).split('\n');
      const entry = new SourceMap(map as never).findEntry(preceding.length - 1, preceding.at(-1)!.length) as { originalSource?: string; originalLine?: number };
      const sourceLine = read('src/lib/idle-gc.ts').split('\n').findIndex((line) => line.includes('function handBackMemory('));
      assert.ok(entry.originalSource?.endsWith('src/lib/idle-gc.ts'), `mapped to ${entry.originalSource}`);
      assert.equal(entry.originalLine, sourceLine);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('compose.yaml: PostgreSQL, Redis, two gateway replicas behind one port, every gateway variable one the gateway reads', () => {
    const compose = parseYaml(read('compose.yaml')) as { services: Record<string, { environment?: Record<string, string>; deploy?: { replicas?: number }; ports?: string[]; build?: unknown; volumes?: string[] }> };
    const { services } = compose;
    assert.ok(services.postgres && services.redis && services.gateway, 'postgres, redis and gateway services');
    const gateway = services.gateway;
    assert.equal(gateway.deploy?.replicas, 2);
    assert.equal(gateway.ports, undefined, 'replicas publish no port of their own');
    const published = Object.entries(services).filter(([, service]) => service.ports?.length);
    assert.equal(published.length, 1, 'one port in front');
    const known = variablesTheGatewayReads();
    const environment = gateway.environment ?? {};
    for (const name of Object.keys(environment)) assert.ok(known.has(name), `${name} is a variable the gateway reads`);
    for (const name of ['HOST', 'DATABASE_URL', 'REDIS_URL', 'TOLLGATE_SECRET_KEY', 'TOLLGATE_ADMIN_TOKEN', 'TOLLGATE_TRUST_PROXY']) {
      assert.ok(name in environment, `the replicas share ${name}`);
    }
    assert.match(environment.DATABASE_URL!, /^postgres:\/\/.*@postgres:5432\//);
    assert.match(environment.REDIS_URL!, /^redis:\/\/redis:6379/);
    const [proxyName, proxy] = published[0]!;
    const mounted = (proxy.volumes ?? []).map((volume) => volume.split(':')[0]!);
    for (const file of mounted.filter((path) => path.startsWith('./'))) {
      const config = read(file);
      assert.match(config, /server gateway:8080/, `${proxyName} sends traffic to the gateway service`);
      assert.match(config, /proxy_buffering off/, 'streams pass as they are produced');
    }
  });
});

describe('behind a reverse proxy (TOLLGATE_TRUST_PROXY)', () => {
  let trusting: TestGateway;
  let plain: TestGateway;
  before(async () => {
    trusting = await startTestGateway({ config: { trustProxy: true } });
    plain = await startTestGateway();
  });
  after(async () => {
    await trusting?.close();
    await plain?.close();
  });

  /** The address the audit log recorded for a credit made with `X-Forwarded-For: 203.0.113.7`. */
  async function auditedAddress(gateway: TestGateway): Promise<string | null> {
    const customer = await createCustomer(gateway);
    const response = await fetch(`${gateway.url}/admin/v1/balance`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.7' },
      body: JSON.stringify({ userId: customer.userId, amount: '1.00' }),
    });
    assert.equal(response.status, 200);
    const audit = await gateway.admin<{ data: Array<{ action: string; actor: { ip: string | null } }> }>('GET', `/audit?targetId=${customer.userId}`);
    return audit.body.data.find((entry) => entry.action === 'balance.credit')!.actor.ip;
  }

  test("trusted: the client's address comes from X-Forwarded-For; untrusted (default): the header is ignored", async () => {
    assert.equal(await auditedAddress(trusting), '203.0.113.7');
    assert.notEqual(await auditedAddress(plain), '203.0.113.7');
  });
});
