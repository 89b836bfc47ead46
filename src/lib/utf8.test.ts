import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeUtf8 } from './utf8.ts';

const long = (unit: string): Buffer => Buffer.from(unit.repeat(Math.ceil(4096 / unit.length)));

test('decodes long text in any script to the string toString makes, one byte a character for Latin-1 as before', () => {
  for (const unit of ['plain ascii, ', 'a café — ', 'кафе и чай, ', '咖啡和茶，', 'emoji 😀 and 𝄞 beyond the BMP, ', '\ufeffa BOM first ']) {
    const bytes = long(unit);
    assert.equal(decodeUtf8(bytes), bytes.toString('utf8'), unit);
  }
  assert.equal(decodeUtf8(Buffer.from('short café')), 'short café');
  assert.equal(decodeUtf8(Buffer.alloc(0)), '');
});

test('bytes that are not UTF-8 decode as toString decodes them: each bad sequence a U+FFFD', () => {
  const valid = long('text é ');
  const cases = [
    [0xff],
    [0xc3], // a lead byte cut off
    [0xc0, 0x80], // an overlong NUL
    [0xed, 0xa0, 0x80], // a surrogate written as UTF-8 (CESU-8)
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xe2, 0x82], // a three-byte sequence cut off
  ];
  for (const bad of cases) {
    for (const bytes of [Buffer.concat([valid, Buffer.from(bad)]), Buffer.concat([Buffer.from(bad), valid]), Buffer.concat([valid, Buffer.from(bad), valid])]) {
      assert.equal(decodeUtf8(bytes), bytes.toString('utf8'), `bytes ${bad.map((byte) => byte.toString(16)).join(' ')}`);
    }
  }
});

test('random text and random bytes decode as toString decodes them', () => {
  // A fixed generator: every run tries the same inputs. Even rounds are valid UTF-8, odd rounds hold stray bytes.
  let seed = 0x2545f491;
  const next = (): number => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x1_0000_0000;
  };
  const pieces = ['a', 'é', 'ж', '中', '😀', '"', '\\', ' '];
  for (let round = 0; round < 200; round++) {
    const parts: Buffer[] = [];
    const length = 2048 + Math.floor(next() * 3000);
    for (let size = 0; size < length; ) {
      const piece = round % 2 === 1 && next() < 0.02 ? Buffer.from([Math.floor(next() * 256)]) : Buffer.from(pieces[Math.floor(next() * pieces.length)]!);
      parts.push(piece);
      size += piece.length;
    }
    const bytes = Buffer.concat(parts);
    assert.equal(decodeUtf8(bytes), bytes.toString('utf8'), `round ${round}`);
  }
});
