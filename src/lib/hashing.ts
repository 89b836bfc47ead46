import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export const sha256Hex = (text: string): string => createHash('sha256').update(text).digest('hex');

export const hmacSha256Hex = (secret: string, text: string): string =>
  createHmac('sha256', secret).update(text).digest('hex');

/** Compares two secrets in constant time (length leaks, content does not). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}
