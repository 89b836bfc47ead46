import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, test } from 'node:test';
import { signatureHeader, verifySignature } from './signature.ts';

const KEY = 'tg_test_key_0123456789';
const T = 1_793_491_200; // 2026-11-01T00:00:00Z
const BODY = '{"code":0,"id":"task_fixed","model":"tts-1","status":"done","result":[],"created_at":1793491200}';
/** HMAC-SHA256 of `${T}.${BODY}` with KEY, computed once by hand and kept as a regression vector. */
const FIXED_V1 = '038e32b0489607ba880f9798783c09173c2cc13bffe21fe15749e33d31df2596';

/** SPEC 6.2 rule 1, computed independently of the module under test. */
const hmac = (key: string, t: number, body: string): string => createHmac('sha256', key).update(`${t}.${body}`).digest('hex');

describe('webhook signature (SPEC 6.2)', () => {
  test('signatureHeader matches an independent HMAC and the fixed vector', () => {
    assert.equal(hmac(KEY, T, BODY), FIXED_V1);
    assert.equal(signatureHeader(BODY, KEY, T), `t=${T},v1=${FIXED_V1}`);
    const other = '{"status":"failed"}';
    assert.equal(signatureHeader(other, 'another key', T + 7), `t=${T + 7},v1=${hmac('another key', T + 7, other)}`);
  });

  test('a valid header is accepted (string and Buffer bodies)', () => {
    const header = `t=${T},v1=${FIXED_V1}`;
    assert.equal(verifySignature(BODY, header, KEY, 300, T), true);
    assert.equal(verifySignature(Buffer.from(BODY, 'utf8'), header, KEY, 300, T), true);
    assert.equal(verifySignature(BODY, header, KEY, 300, T + 300), true, 'exactly at the tolerance');
  });

  test('non-ASCII bodies are signed over their UTF-8 bytes', () => {
    const body = '{"prompt":"Маяк на закате","status":"done"}';
    const header = signatureHeader(body, KEY, T);
    assert.equal(header, `t=${T},v1=${hmac(KEY, T, body)}`);
    assert.equal(verifySignature(Buffer.from(body, 'utf8'), header, KEY, 300, T), true);
  });

  test('a tampered body is rejected', () => {
    const header = `t=${T},v1=${FIXED_V1}`;
    assert.equal(verifySignature(BODY.replace('done', 'fail'), header, KEY, 300, T), false);
    assert.equal(verifySignature(`${BODY} `, header, KEY, 300, T), false, 'even one trailing byte');
    assert.equal(verifySignature(Buffer.from(BODY.replace('tts-1', 'tts-2')), header, KEY, 300, T), false);
  });

  test('the wrong key is rejected', () => {
    assert.equal(verifySignature(BODY, `t=${T},v1=${FIXED_V1}`, `${KEY}x`, 300, T), false);
    assert.equal(verifySignature(BODY, `t=${T},v1=${FIXED_V1}`, '', 300, T), false);
  });

  test('a changed t is rejected (t is part of what is signed)', () => {
    assert.equal(verifySignature(BODY, `t=${T + 1},v1=${FIXED_V1}`, KEY, 300, T), false);
  });

  test('a t older (or further ahead) than the tolerance is rejected', () => {
    const header = `t=${T},v1=${FIXED_V1}`;
    assert.equal(verifySignature(BODY, header, KEY, 300, T + 301), false, 'too old');
    assert.equal(verifySignature(BODY, header, KEY, 60, T + 61), false, 'a tighter tolerance');
    assert.equal(verifySignature(BODY, header, KEY, 60, T + 60), true);
    assert.equal(verifySignature(BODY, header, KEY, 300, T - 301), false, 'from the future');
    assert.equal(verifySignature(BODY, header, KEY, undefined, T + 301), false, 'the default tolerance is 300 s');
  });

  test('one of several v1 values may match (key rotation)', () => {
    const wrong = hmac('an old key', T, BODY);
    assert.equal(verifySignature(BODY, `t=${T},v1=${wrong},v1=${FIXED_V1}`, KEY, 300, T), true);
    assert.equal(verifySignature(BODY, `t=${T},v1=${FIXED_V1},v1=${wrong}`, KEY, 300, T), true);
    assert.equal(verifySignature(BODY, `t=${T},v1=${wrong},v1=${hmac('yet another', T, BODY)}`, KEY, 300, T), false);
  });

  test('malformed headers are rejected', () => {
    const malformed: Array<string | null | undefined> = [
      undefined,
      null,
      '',
      FIXED_V1,
      `v1=${FIXED_V1}`,
      `t=${T}`,
      `t=${T},v1=`,
      `t=,v1=${FIXED_V1}`,
      `t=abc,v1=${FIXED_V1}`,
      `t=${T}.5,v1=${FIXED_V1}`,
      `t=-${T},v1=${FIXED_V1}`,
      `t=${T},v1=${FIXED_V1.slice(0, 63)}`,
      `t=${T},v1=${FIXED_V1}0`,
      `t=${T},v1=${FIXED_V1.toUpperCase()}`,
      `t=${T},v0=${FIXED_V1}`,
      `t=${T};v1=${FIXED_V1}`,
      `t=${T} v1=${FIXED_V1}`,
    ];
    for (const header of malformed) assert.equal(verifySignature(BODY, header, KEY, 300, T), false, `rejects ${String(header)}`);
  });
});
