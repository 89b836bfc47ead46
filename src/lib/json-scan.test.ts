import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJsonText, escapedStringValues, escapeJsonText, topLevelValue } from './json-scan.ts';

test('escapeJsonText and decodeJsonText are inverse', () => {
  for (const text of ['', 'plain', 'a "quoted" \\ back\nslash', 'café 😀', '\u0000\u001f']) assert.equal(decodeJsonText(escapeJsonText(text)), text);
  assert.equal(decodeJsonText('broken \\'), 'broken \\', 'text a vendor escaped badly is kept as it came');
});

describe('topLevelValue', () => {
  const usage = '{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":1}}';
  const found = (text: string, key = 'usage'): string | undefined => {
    const range = topLevelValue(text, key);
    return range && text.slice(range.start, range.end);
  };

  test('finds the value of a top-level key: object, string, literal, at any place and with blanks', () => {
    assert.equal(found(`{"id":"x","choices":[{"message":{"content":"hi"}}],"usage":${usage}}`), usage);
    assert.equal(found(`{"usage":${usage},"id":"x"}`), usage);
    assert.equal(found(`{ "id" : "x" ,\n  "usage" :  ${usage}  }`), usage);
    assert.equal(found('{"usage":null,"id":"x"}'), 'null');
    assert.equal(found('{"id":"x","usage" : null }'), 'null');
    assert.equal(found('{"model":"gpt","id":"x"}', 'model'), '"gpt"');
  });

  test('a key that is not at the top level, is only text, or is there twice is not found', () => {
    assert.equal(found(`{"choices":[{"usage":${usage}}]}`), undefined, 'nested in an array');
    assert.equal(found(`{"meta":{"usage":${usage}}}`), undefined, 'nested in an object');
    assert.equal(found('{"content":"the \\"usage\\": {} is text","id":"usage"}'), undefined, 'inside strings, or as a value');
    assert.equal(found(`{"usage":${usage},"usage":${usage}}`), undefined, 'twice');
    assert.equal(found('{"id":"x"}'), undefined, 'absent');
  });

  test('strings end at the first quote after an even run of backslashes, whatever their length', () => {
    // Texts whose strings hold runs of 0-5 backslashes before quotes, escaped as JSON escapes them: the value after them is
    // found exactly where JSON.parse puts it.
    for (let run = 0; run <= 5; run++) {
      const content = `${'\\'.repeat(run)}"x${'\\'.repeat(run)}"${'\\'.repeat(run)}`;
      const text = JSON.stringify({ id: content, choices: [{ message: { content } }], usage: JSON.parse(usage), tail: content });
      assert.equal(found(text), usage, `a run of ${run}`);
      assert.equal(found(text, 'tail'), JSON.stringify(content), `a run of ${run}, the string itself`);
    }
    assert.equal(found(JSON.stringify({ id: 'ends in a backslash \\', usage: null })), 'null');
    assert.equal(found(JSON.stringify({ id: 'a quote " then a backslash and a quote \\" then two \\\\"', usage: 1 })), '1');
  });

  test('text that is not one well-formed object gives nothing', () => {
    for (const text of ['[1,2]', `{"usage":${usage}`, `{"usage":${usage}} trailing`, '{"usage":{"a":"unterminated}}', 'not json', '']) {
      assert.equal(found(text), undefined, text);
    }
  });
});

test('escapedStringValues: the string values of the keys, in order, still escaped', () => {
  const keys = /"(text|partial_json)"[ \t\r\n]*:[ \t\r\n]*"/g;
  const raw = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"say \\"hi\\" \\u00e9"}}';
  assert.equal(decodeJsonText(escapedStringValues(raw, keys)!), JSON.parse(raw).delta.text);
  assert.equal(escapedStringValues('{"delta":{"partial_json":"{\\"a\\":1"}}', keys), '{\\"a\\":1');
  assert.equal(escapedStringValues('{"delta":{"type":"input_json_delta"}}', keys), '', 'no such key: nothing');
  assert.equal(escapedStringValues('{"delta":{"text":"open', keys), undefined, 'a string that does not close');
});
