import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { toolResultReplyText } from '../../simulator/server.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { assertBilledOncePerCall, CLAUDE_MODEL, CODEX_KEY_VARIABLE, codexConfig, OPENAI_MODEL, type RecordedCall } from '../helpers/client-compat.ts';
import { loopbackNamespaceUnavailable, runInLoopbackNamespace } from '../helpers/loopback-namespace.ts';

/**
 * The Codex CLI (npm `@openai/codex`) against Tollgate with the README's config.toml: a `tollgate` model provider whose
 * `base_url` is the gateway's /v1, `env_key` naming the variable that holds the Tollgate key, `wire_api = "responses"`
 * (DESIGN §12), and nothing else: Codex's default config, also for Claude models, whose requests carry Codex's multi-agent
 * `namespace` tool and hosted `web_search` (the gateway flattens the one and skips the other for Claude). `codex exec` runs in
 * a loopback-only network namespace (it looks up outside hosts at start) whose 127.0.0.1:<port> is bridged to the gateway.
 *
 * Codex always streams and always offers its tools; the simulator answers a request with tools by calling the first function
 * tool (`exec_command`, arguments sampled from its schema: `{"cmd":"sample"}`), so a run is one shell round trip: Codex runs
 * `sample` in its read-only sandbox (exit 127), sends the output back, and prints the simulator's `Tool result received: …`.
 * Two streamed calls to /v1/responses, two charges.
 */

const CODEX_LAUNCHER = fileURLToPath(new URL('../../node_modules/@openai/codex/bin/codex.js', import.meta.url));
const PROMPT = 'List the files in this directory';

interface AccessLine {
  msg: string;
  reqId: string;
  keyId?: string;
  route: string;
  status: number;
}

describe('Codex CLI (codex exec) through Tollgate', async () => {
  const unavailable = existsSync(CODEX_LAUNCHER) ? await loopbackNamespaceUnavailable() : `@openai/codex is not installed (${CODEX_LAUNCHER})`;
  let gateway: TestGateway;
  before(async () => {
    if (!unavailable) gateway = await startTestGateway({ captureLogs: true });
  });
  after(async () => {
    await gateway?.close();
  });

  for (const model of [OPENAI_MODEL, CLAUDE_MODEL]) {
    test(`codex exec on ${model}: a streamed shell-tool round trip, the answer printed, two calls charged once each`, async (t) => {
      if (unavailable) {
        t.skip(unavailable);
        return;
      }
      const { key, keyId, userId } = await gateway.fundedKey({ balance: '10.00' });
      const home = await mkdtemp(join(tmpdir(), 'tollgate-codex-home-'));
      const work = await mkdtemp(join(tmpdir(), 'tollgate-codex-work-'));
      try {
        await writeFile(join(home, 'config.toml'), codexConfig(gateway.url, model));
        const run = await runInLoopbackNamespace({
          targetPort: Number(new URL(gateway.url).port),
          command: process.execPath,
          args: [CODEX_LAUNCHER, 'exec', '--skip-git-repo-check', '--sandbox', 'read-only', PROMPT],
          // Only what Codex needs: its home (so no user config is read) and the key in the variable the config names.
          env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: home, [CODEX_KEY_VARIABLE]: key },
          cwd: work,
          timeoutMs: 90_000,
        });
        const transcript = `exit ${run.code}${run.timedOut ? ' (timed out)' : ''}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
        assert.equal(run.code, 0, transcript);
        assert.match(run.stderr, /bash -lc sample/, `codex ran the simulator's shell call: ${transcript}`);
        assert.ok(run.stdout.trim().startsWith(toolResultReplyText('').trim()), `codex printed the model's answer to the tool output: ${transcript}`);

        if (model === CLAUDE_MODEL) {
          // Codex's default tools reached Claude: its multi-agent namespace flattened, its hosted web search left out.
          const sent = gateway.simulator.lastRequest('/v1/messages')?.json as { tools?: Array<{ name?: string; type?: string }> } | undefined;
          const names = (sent?.tools ?? []).map((tool) => tool.name ?? tool.type);
          assert.ok(names.includes('exec_command'), `tools sent to Claude: ${names.join(', ')}`);
          assert.ok(names.some((name) => name?.startsWith('multi_agent_v1__')), `tools sent to Claude: ${names.join(', ')}`);
          assert.ok(!names.some((name) => name?.includes('web_search')), `tools sent to Claude: ${names.join(', ')}`);
        }

        // Every HTTP call Codex made with the key, from the gateway's access log.
        const lines = gateway.logLines.map((line) => JSON.parse(line) as AccessLine).filter((line) => line.msg === 'request' && line.keyId === keyId);
        const calls: RecordedCall[] = lines.map((line) => ({ method: 'POST', path: line.route, status: line.status, requestId: line.reqId }));
        assert.deepEqual(lines.map((line) => line.route), ['responses', 'responses'], `codex's calls: ${JSON.stringify(lines)}`);
        await assertBilledOncePerCall(gateway, { userId }, { calls: 2, endpoint: 'responses', model, stream: true }, calls);
      } finally {
        await rm(home, { recursive: true, force: true });
        await rm(work, { recursive: true, force: true });
      }
    });
  }
});
