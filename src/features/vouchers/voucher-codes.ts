import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../lib/hashing.ts';

/** Crockford's base32: no I, L, O or U, so a code read aloud or retyped survives. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 20 symbols of 5 bits: 100 random bits, beyond guessing even without the redemption throttle. */
const SYMBOLS = 20;
const PREFIX = 'TGV';

/** A new code, `TGV-XXXX-XXXX-XXXX-XXXX-XXXX`; only its hash is stored. */
export function newVoucherCode(): string {
  const bytes = randomBytes(SYMBOLS);
  let body = '';
  // 256 is a multiple of 32, so the low five bits of a random byte are uniform.
  for (const byte of bytes) body += ALPHABET[byte & 31];
  return [PREFIX, ...body.match(/.{4}/g)!].join('-');
}

/**
 * The code's 20 symbols as typed by a customer: any case, with or without dashes, spaces or the prefix, and with the letters
 * Crockford reads as digits (O → 0, I and L → 1). Undefined when it cannot be a code at all.
 */
export function normalizeVoucherCode(text: string): string | undefined {
  let body = text.toUpperCase().replace(/[\s-]/g, '');
  if (body.length === SYMBOLS + PREFIX.length && body.startsWith(PREFIX)) body = body.slice(PREFIX.length);
  body = body.replace(/O/g, '0').replace(/[IL]/g, '1');
  if (body.length !== SYMBOLS) return undefined;
  for (const symbol of body) if (!ALPHABET.includes(symbol)) return undefined;
  return body;
}

export const voucherCodeHash = (normalized: string): string => sha256Hex(`voucher:${normalized}`);

/** What lists show of a code: enough to tell codes apart, far too little to redeem one. */
export const voucherCodeStart = (normalized: string): string => `${PREFIX}-${normalized.slice(0, 4)}`;
