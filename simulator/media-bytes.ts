// Deterministic binary bodies for the media endpoints (speech audio, video content).
// deterministicBytes(seed, n) = SHA-256(`${seed}#0`) ‖ SHA-256(`${seed}#1`) ‖ … cut to n bytes.

import { createHash } from 'node:crypto';

export function deterministicBytes(seed: string, length: number): Buffer {
  const blocks: Buffer[] = [];
  for (let index = 0, total = 0; total < length; index += 1) {
    const block = createHash('sha256').update(`${seed}#${index}`).digest();
    blocks.push(block);
    total += block.length;
  }
  return Buffer.concat(blocks).subarray(0, length);
}

/** A canonical 44-byte-header RIFF/WAVE file around 16-bit little-endian mono PCM. */
export function wavFile(pcm: Buffer, sampleRate: number): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34); // bits per sample
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** An ISO BMFF file: a 24-byte `ftyp` box (isom, mp41) followed by one `mdat` box holding `payload`. */
export function mp4File(payload: Buffer): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4, 'ascii');
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write('isommp41', 16, 'ascii');
  const mdat = Buffer.alloc(8);
  mdat.writeUInt32BE(8 + payload.length, 0);
  mdat.write('mdat', 4, 'ascii');
  return Buffer.concat([ftyp, mdat, payload]);
}

/** A RIFF/WEBP container holding `payload` (not a decodable image: enough for type sniffing). */
export function webpFile(payload: Buffer): Buffer {
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(4 + payload.length, 4);
  header.write('WEBP', 8, 'ascii');
  return Buffer.concat([header, payload]);
}

/** JPEG SOI + APP0 marker, `payload`, EOI (enough for type sniffing). */
export function jpegFile(payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), payload, Buffer.from([0xff, 0xd9])]);
}
