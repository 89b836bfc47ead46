import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { silentLogger, testAssistant, testToolContext } from '../../../../test/helpers/assistant-fixture.ts';
import { startFunctionServer, type TestFunctionServer } from '../../../../test/helpers/function-server.ts';
import { ApiFunctionsToolsetFactory } from './api-functions-toolset.ts';
import { callToolWithTimeout } from './tool-call.ts';

let server: TestFunctionServer;
/** Resolves when the hanging request's connection is closed by the gateway. */
let closed: Promise<void>;

before(async () => {
  let markClosed: () => void = () => {};
  closed = new Promise((resolve) => {
    markClosed = resolve;
  });
  // Never answers: only the caller can end the request.
  server = await startFunctionServer((_request, response) => response.on('close', markClosed));
});
after(() => server.close());

test('a tool that hangs is aborted at the time limit: the API function server sees its request closed', async () => {
  // The function's own limit is far away; only the tool-call limit can end the request.
  const toolset = await new ApiFunctionsToolsetFactory({ allowPrivateUrls: true, logger: silentLogger, timeoutMs: 600_000 }).open(
    testAssistant({ apiFunctions: [{ name: 'hang', description: 'never answers', parameters: { type: 'object' }, url: `${server.url}/hang`, method: 'POST' }] }),
  );
  assert.ok(toolset);
  const answer = await callToolWithTimeout(toolset, 'hang', {}, testToolContext(), 200);
  assert.equal(answer, 'Error: the tool hang did not answer within 0.2 s.');
  let waited: NodeJS.Timeout | undefined;
  const stillOpen = new Promise<string>((resolve) => {
    waited = setTimeout(() => resolve('still open'), 5_000);
  });
  assert.equal(await Promise.race([closed.then(() => 'closed'), stillOpen]), 'closed', 'the request was closed, not left running');
  clearTimeout(waited);
  assert.equal(server.requests.length, 1);
});

test('a cancelled chat turn aborts the tool call too', async () => {
  const toolset = await new ApiFunctionsToolsetFactory({ allowPrivateUrls: true, logger: silentLogger }).open(
    testAssistant({ apiFunctions: [{ name: 'hang', description: 'never answers', parameters: { type: 'object' }, url: `${server.url}/hang`, method: 'POST' }] }),
  );
  assert.ok(toolset);
  const turn = new AbortController();
  const pending = callToolWithTimeout(toolset, 'hang', {}, testToolContext(turn.signal), 600_000);
  turn.abort();
  assert.equal(await pending, 'Error: the call of hang was cancelled.');
});
