import { createHmac } from 'node:crypto';
import { constantTimeEqual, hmacSha256Hex } from '../../lib/hashing.ts';

/** The signature header of a task webhook (SPEC 6.2): `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`. */
export function signatureHeader(rawBody: string, secret: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacSha256Hex(secret, `${unixSeconds}.${rawBody}`)}`;
}

/**
 * For receivers of Tollgate's task webhooks: true when `header` (X-Tollgate-Signature) signs `rawBody` (the exact bytes
 * received, not re-serialised JSON) with `apiKey` and its `t` is at most `toleranceSeconds` away from `nowSeconds`.
 * Any of several `v1` values may match (for key rotation); comparison is constant-time.
 */
export function verifySignature(
  rawBody: string | Buffer,
  header: string | undefined | null,
  apiKey: string,
  toleranceSeconds = 300,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const separator = part.indexOf('=');
    if (separator < 0) continue;
    const name = part.slice(0, separator).trim();
    const value = part.slice(separator + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value);
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = createHmac('sha256', apiKey).update(`${timestamp}.`).update(rawBody).digest('hex');
  return signatures.some((signature) => constantTimeEqual(signature, expected));
}
