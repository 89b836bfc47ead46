import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ECHO_MARKER } from '../simulator/server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asRecord, postRaw, readRaw } from './helpers/e2e.ts';

/**
 * JSON bodies as clients send them, read by the gateway's own body parser (app.ts): text in any script, long or short, a
 * byte-order mark, bytes that are not UTF-8. A Responses call to a Claude model is translated and serialised again, so the
 * vendor's request shows the text the gateway read, not the client's bytes passed on.
 */

const SONNET = 'claude-sonnet-4-5';

describe('JSON bodies as clients send them', () => {
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.fundedKey({ balance: '10.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  const vendorRequest = (): Record<string, unknown> => asRecord(gw.simulator.lastRequest('/v1/messages')?.json, 'the Messages request');

  test('text in any script, short or tens of kilobytes, reaches a vendor that needs it translated exactly as written', async () => {
    const units = ['plain ASCII text, ', 'une conversation en français — ', 'разговор на русском языке, ', '中文的长对话，', 'emoji 😀 and 𝄞 beyond the BMP, '];
    for (const unit of units) {
      for (const repeat of [1, 400]) {
        const instructions = `Answer in kind: ${unit.repeat(repeat)}`;
        const input = unit.repeat(repeat);
        const response = await postRaw(gw, '/v1/responses', { key, body: { model: SONNET, instructions, input, max_output_tokens: 20 } });
        assert.equal(response.status, 200, `${unit} × ${repeat}: ${response.text.slice(0, 200)}`);
        const sent = vendorRequest();
        assert.deepEqual(sent.system, [{ type: 'text', text: instructions }], `${unit} × ${repeat}: instructions`);
        assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: input }] }], `${unit} × ${repeat}: input`);
        assert.equal(asRecord(response.json).instructions, instructions, `${unit} × ${repeat}: the Response names its instructions`);
      }
    }
  });

  test("a vendor's answer in any script, short or long, reaches the client as the vendor wrote it", async () => {
    const units = ['plain ASCII text, ', 'разговор на русском языке, ', '中文的长对话，', 'emoji 😀 and 𝄞 beyond the BMP, '];
    for (const unit of units) {
      for (const repeat of [1, 400]) {
        // The simulator answers a text holding its echo marker with that text: the answer is as long as the question.
        const text = `${ECHO_MARKER} ${unit.repeat(repeat)}`;
        const translated = await postRaw(gw, '/v1/responses', { key, body: { model: SONNET, input: text, max_output_tokens: 20_000 } });
        assert.equal(translated.status, 200, translated.text.slice(0, 200));
        const message = asRecord((asRecord(translated.json).output as unknown[])[0]);
        assert.deepEqual((message.content as unknown[]).map((part) => asRecord(part).text), [text], `${unit} × ${repeat}: a Claude answer through the Responses API`);
        const chat = await postRaw(gw, '/v1/chat/completions', { key, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: text }] } });
        assert.equal(chat.status, 200, chat.text.slice(0, 200));
        const choice = asRecord((asRecord(chat.json).choices as unknown[])[0]);
        assert.equal(asRecord(choice.message).content, text, `${unit} × ${repeat}: a chat completion`);
      }
    }
  });

  test('a body that starts with a byte-order mark is read as the body after it', async () => {
    const long = 'с меткой порядка байтов '.repeat(200);
    for (const input of ['short', long]) {
      const response = await postRaw(gw, '/v1/responses', { key, rawBody: `\ufeff${JSON.stringify({ model: SONNET, input, max_output_tokens: 20 })}` });
      assert.equal(response.status, 200, response.text.slice(0, 200));
      assert.deepEqual(vendorRequest().messages, [{ role: 'user', content: [{ type: 'text', text: input }] }]);
    }
  });

  test('bytes that are not UTF-8 inside a string are read as U+FFFD, short body or long; outside one they are a 400', async () => {
    for (const padding of ['', 'ж'.repeat(2000)]) {
      const [head, tail] = [`{"model":"${SONNET}","max_output_tokens":20,"input":"${padding}bad `, ' byte"}'];
      const body = Buffer.concat([Buffer.from(head), Buffer.from([0xff, 0xc3]), Buffer.from(tail)]);
      const response = await readRaw(await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body }));
      assert.equal(response.status, 200, response.text.slice(0, 200));
      assert.deepEqual(vendorRequest().messages, [{ role: 'user', content: [{ type: 'text', text: `${padding}bad \ufffd\ufffd byte` }] }]);
    }
    const outside = Buffer.concat([Buffer.from(`{"model":"${SONNET}","input":"${'ж'.repeat(2000)}",`), Buffer.from([0xff]), Buffer.from('}')]);
    const refused = await readRaw(await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: outside }));
    assert.equal(refused.status, 400, refused.text.slice(0, 200));
    assert.equal(asRecord(asRecord(refused.json).error).type, 'invalid_request_error');
  });
});
