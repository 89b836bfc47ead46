import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const post = async (gw: TestGateway, key: string, path: string, body: unknown) => {
  const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, text: await response.text() };
};

/** DESIGN §14: vendor error messages reach clients only after scrubbing what identifies the business's vendor account. */
describe('vendor errors are scrubbed of account identifiers', () => {
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.fundedKey());
  });
  after(async () => {
    await gw?.close();
  });

  test('an OpenAI rate-limit message naming the organisation and project', async () => {
    const message = 'Rate limit reached for gpt-4o-mini in organization org-Zx81kQpL3mNv4 project proj_Ab12Cd34Ef56 on requests per min (RPM): Limit 3.';
    gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 429, times: 1, body: { error: { message, type: 'requests', param: null, code: 'rate_limit_exceeded' } } });
    const answer = await post(gw, key, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.status, 429);
    assert.ok(!answer.text.includes('org-Zx81kQpL3mNv4') && !answer.text.includes('proj_Ab12Cd34Ef56'), answer.text);
    assert.match(answer.text, /organization org-\*\*\* project proj_\*\*\*/);
  });

  test('a passed-through Anthropic body naming a key fragment and the vendor request id', async () => {
    const body = { type: 'error', error: { type: 'invalid_request_error', message: 'x-api-key sk-ant-api03-QwErTy***AbCd is not valid for this workspace' }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' };
    gw.simulator.addFault({ match: { path: '/v1/messages' }, status: 400, times: 1, body });
    const answer = await post(gw, key, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(answer.status, 400);
    assert.ok(!answer.text.includes('QwErTy') && !answer.text.includes('req_011CSHoEeqs5C35K2UUqR7Fy'), answer.text);
    const parsed = JSON.parse(answer.text) as { error: { message: string } };
    assert.equal(parsed.error.message, 'x-api-key sk-ant-*** is not valid for this workspace');
  });
});
