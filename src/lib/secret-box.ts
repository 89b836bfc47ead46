import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/** A short fingerprint of a master key, carried by every value sealed under it (it reveals nothing usable about the key). */
export const keyIdOf = (key: Buffer): string => createHash('sha256').update('tollgate-key-id\u0000').update(key).digest('hex').slice(0, 8);

function encrypt(key: Buffer, plain: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), encrypted]);
}

function decrypt(key: Buffer, bytes: Buffer): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * Seals the secrets the gateway keeps (provider API keys, bot tokens, the keys that sign task webhooks) with AES-256-GCM under
 * the master key (DESIGN §14), which never lives in the database. Sealed text: `v1.<key id>.<base64 of iv (12) ‖ tag (16) ‖
 * ciphertext>`; the key id lets values sealed under a previous key open after a rotation.
 */
export class SecretBox {
  readonly keyId: string;
  private readonly keys: Map<string, Buffer>;

  constructor(private readonly current: Buffer, previous: readonly Buffer[] = []) {
    this.keyId = keyIdOf(current);
    this.keys = new Map([...previous.map((key) => [keyIdOf(key), key] as const), [this.keyId, current]]);
  }

  seal(plain: string): string {
    return `${VERSION}.${this.keyId}.${encrypt(this.current, plain).toString('base64')}`;
  }

  /** The plain text, or undefined when the sealed text was altered or sealed under a key this box does not hold. */
  open(sealed: string): string | undefined {
    const parsed = parseSealed(sealed);
    const key = parsed && this.keys.get(parsed.keyId);
    return key && parsed ? decrypt(key, parsed.bytes) : undefined;
  }

  /** True when the value carries the id of a key this box holds (it may still fail to open if it was altered). */
  holdsKeyOf(sealed: string): boolean {
    const keyId = parseSealed(sealed)?.keyId;
    return keyId !== undefined && this.keys.has(keyId);
  }

  /** True for a value this box seals differently today (under a previous key, or not in the current format). */
  isStale(sealed: string): boolean {
    return parseSealed(sealed)?.keyId !== this.keyId;
  }
}

/** The key id of a value sealed by SecretBox, or undefined for anything else (clear text, the format before key ids). */
export function sealedKeyId(text: string): string | undefined {
  return parseSealed(text)?.keyId;
}

function parseSealed(text: string): { keyId: string; bytes: Buffer } | undefined {
  const match = /^v1\.([0-9a-f]{8})\.([A-Za-z0-9+/=]+)$/.exec(text);
  return match ? { keyId: match[1]!, bytes: Buffer.from(match[2]!, 'base64') } : undefined;
}

/**
 * Opens a value sealed before master keys existed (the key derived from the database's `hash_secret` and a purpose). Used only
 * to reseal such values once on upgrade; the gateway never seals this way.
 */
export function openLegacySealed(sealed: string, serverSecret: string, purpose: string): string | undefined {
  const key = createHash('sha256').update(`${purpose}\u0000${serverSecret}`).digest();
  return decrypt(key, Buffer.from(sealed, 'base64'));
}

/** The purpose the gateway's one legacy box used for every value it sealed (task webhook keys and bot tokens alike). */
export const LEGACY_PURPOSE = 'webhook-signing-key';
