import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { CLAUDE_MODEL, codexConfig, OPENAI_MODEL } from '../helpers/client-compat.ts';

/**
 * The README's "Use it with your client" promises that each snippet is what the compatibility suite runs. This keeps the two
 * from drifting apart: the settings each client suite uses appear in the README as written there (with the README's
 * 127.0.0.1:8080 in place of the test gateway's address).
 */

const README = readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');
const section = (() => {
  const start = README.indexOf('## Use it with your client');
  assert.ok(start >= 0, 'the README has the clients section');
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
})();
const BASE = 'http://127.0.0.1:8080';

test('the Codex config.toml in the README is the one the Codex test writes; for Claude only the model differs', () => {
  const blocks = [...section.matchAll(/```toml\n([\s\S]*?)```/g)].map((match) => match[1]);
  assert.deepEqual(blocks, [codexConfig(BASE, OPENAI_MODEL)]);
  assert.equal(codexConfig(BASE, CLAUDE_MODEL), codexConfig(BASE, OPENAI_MODEL).replace(`model = "${OPENAI_MODEL}"`, `model = "${CLAUDE_MODEL}"`));
  assert.ok(section.includes(`The same config works for Claude models (\`model = "${CLAUDE_MODEL}"\`)`), 'the README says how Claude is set');
  assert.ok(section.includes('codex exec --skip-git-repo-check --sandbox read-only'), 'the command the test runs');
});

test('each client is set up in the README as its suite sets it up', () => {
  const expected = [
    // test/clients/openai.test.ts
    `new OpenAI({ apiKey: KEY, baseURL: '${BASE}/v1' })`,
    // test/clients/anthropic.test.ts (the SDK adds /v1/messages; Claude Code's wire uses authToken)
    `new Anthropic({ apiKey: KEY, baseURL: '${BASE}' })`,
    'bearer token (`authToken`)',
    // test/clients/ai-sdk.test.ts
    `createOpenAI({ baseURL: '${BASE}/v1', apiKey: KEY })`,
    `createAnthropic({ baseURL: '${BASE}/v1', apiKey: KEY })`,
    `tollgate('${OPENAI_MODEL}')`,
    `tollgate.chat('${CLAUDE_MODEL}')`,
    // test/clients/langchain.test.ts
    `configuration: { baseURL: '${BASE}/v1' }`,
    'useResponsesApi: true',
    `anthropicApiUrl: '${BASE}'`,
    // Claude Code (checked through the Anthropic SDK in anthropic.test.ts)
    `ANTHROPIC_BASE_URL=${BASE}\n`,
    'ANTHROPIC_AUTH_TOKEN=$KEY',
  ];
  for (const text of expected) assert.ok(section.includes(text), `the README's clients section has: ${text}`);
});
