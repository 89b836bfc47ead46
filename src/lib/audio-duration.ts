/** Assumed bit rate for compressed audio whose length the gateway cannot read (128 kbit/s, common for speech MP3). */
const FALLBACK_BYTES_PER_SECOND = 16_000;

/**
 * Seconds of audio in a file, for per-minute pricing before the vendor has answered: exact for PCM WAV (from its header),
 * an estimate from the size for other formats. Never below one second.
 */
export function audioSeconds(data: Buffer): number {
  if (data.length >= 44 && data.toString('ascii', 0, 4) === 'RIFF' && data.toString('ascii', 8, 12) === 'WAVE') {
    let offset = 12;
    let byteRate = 0;
    while (offset + 8 <= data.length) {
      const id = data.toString('ascii', offset, offset + 4);
      const size = data.readUInt32LE(offset + 4);
      if (id === 'fmt ' && offset + 16 <= data.length) byteRate = data.readUInt32LE(offset + 16);
      if (id === 'data' && byteRate > 0) return Math.max(1, Math.ceil(Math.min(size, data.length - offset - 8) / byteRate));
      offset += 8 + size + (size % 2);
    }
  }
  return Math.max(1, Math.ceil(data.length / FALLBACK_BYTES_PER_SECOND));
}
