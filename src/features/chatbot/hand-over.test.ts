import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asksForHuman } from './hand-over.ts';

test('asksForHuman: a client asking for a person, in English or Russian and in any case; other text is not', () => {
  for (const text of ['Can I talk to a human?', 'OPERATOR please', 'I want a live agent', 'Позовите оператора', 'Хочу поговорить с человеком', 'МЕНЕДЖЕР!', 'Есть тут живой кто-нибудь?']) {
    assert.equal(asksForHuman(text), true, text);
  }
  for (const text of ['What are your prices?', 'humane society', 'cooperation', 'Сколько стоит доставка?']) {
    assert.equal(asksForHuman(text), false, text);
  }
});
