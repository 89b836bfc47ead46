import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

/** The key that seals secrets at rest (DESIGN §14): 32 bytes, never stored in the database. */
export interface MasterKeys {
  current: Buffer;
  /** Keys values may still be sealed under (after a rotation); they open values, never seal them. */
  previous: Buffer[];
  /** Where the current key came from: `TOLLGATE_SECRET_KEY` or `DATA_DIR/secret.key`. */
  source: 'environment' | 'file';
  /** True when this start created `DATA_DIR/secret.key`. */
  created: boolean;
}

export const KEY_FILE = 'secret.key';
export const PREVIOUS_KEY_FILE = 'secret.key.previous';

/** 32 bytes written as 64 hex characters or as base64 (standard or URL-safe); anything else is refused, naming the source. */
export function parseMasterKey(text: string, source: string): Buffer {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (/^[A-Za-z0-9+/_-]{42,43}={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length === 32) return bytes;
  }
  throw new Error(`${source}: must be 32 bytes written as 64 hex characters or as base64 (e.g. the output of \`openssl rand -base64 32\`)`);
}

export const generateMasterKey = (): Buffer => randomBytes(32);

export const formatMasterKey = (key: Buffer): string => key.toString('base64');

/** Creates the data directory 0700, or narrows it to 0700 when it is wider (a shared sticky directory such as /tmp is left alone). */
export function secureDataDirectory(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const stats = statSync(path);
  const sticky = (stats.mode & 0o1000) !== 0;
  if (!sticky && (stats.mode & 0o077) !== 0) chmodSync(path, 0o700);
}

/** Writes a secret file readable by its owner only (0600 even when the file already existed with wider bits). */
export function writePrivateFile(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function readKeyFile(path: string): Buffer | undefined {
  if (!existsSync(path)) return undefined;
  return parseMasterKey(readFileSync(path, 'utf8'), path);
}

/**
 * The master keys from the environment (`TOLLGATE_SECRET_KEY`, `TOLLGATE_SECRET_KEY_PREVIOUS`) or from `DATA_DIR/secret.key`
 * and `secret.key.previous`; when neither holds a current key, a new one is written to `DATA_DIR/secret.key` (0600).
 */
export function loadMasterKeys(options: { dataDir: string; secretKey?: string | undefined; previousKey?: string | undefined }): MasterKeys {
  const keyPath = join(options.dataDir, KEY_FILE);
  const previousPath = join(options.dataDir, PREVIOUS_KEY_FILE);
  const previousFromEnvironment = options.previousKey ? parseMasterKey(options.previousKey, 'TOLLGATE_SECRET_KEY_PREVIOUS') : undefined;
  const previous = [previousFromEnvironment ?? readKeyFile(previousPath)].filter((key): key is Buffer => key !== undefined);
  if (options.secretKey) {
    return { current: parseMasterKey(options.secretKey, 'TOLLGATE_SECRET_KEY'), previous, source: 'environment', created: false };
  }
  const existing = readKeyFile(keyPath);
  if (existing) return { current: existing, previous, source: 'file', created: false };
  secureDataDirectory(options.dataDir);
  const current = generateMasterKey();
  writePrivateFile(keyPath, `${formatMasterKey(current)}\n`);
  return { current, previous, source: 'file', created: true };
}

/**
 * Makes `next` the key in `DATA_DIR/secret.key` and keeps the one it replaces in `secret.key.previous`, so values sealed
 * under either open until every one is resealed. The files are written before anything is resealed: a crash in between
 * leaves values under keys that are both still on disk.
 */
export function rotateKeyFiles(dataDir: string, current: Buffer, next: Buffer): void {
  secureDataDirectory(dataDir);
  const keyPath = join(dataDir, KEY_FILE);
  writePrivateFile(join(dataDir, PREVIOUS_KEY_FILE), `${formatMasterKey(current)}\n`);
  writePrivateFile(`${keyPath}.next`, `${formatMasterKey(next)}\n`);
  renameSync(`${keyPath}.next`, keyPath);
}
