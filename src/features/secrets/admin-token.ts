import { randomBase62 } from '../../lib/ids.ts';
import { sha256Hex } from '../../lib/hashing.ts';

export interface SettingsStore {
  get(key: string): Promise<string | undefined>;
  getOrSet(key: string, value: string): Promise<string>;
  delete(key: string): Promise<void>;
}

export interface AdminTokenState {
  /** SHA-256 hex of the admin token: all the gateway keeps of it. */
  hash: string;
  /** The token, when this start generated it (to print once and write to DATA_DIR/admin-token); otherwise undefined. */
  generated: string | undefined;
}

/** Before hashing, the settings kept the token itself under this name; it is replaced by its hash on start. */
const LEGACY_SETTING = 'admin_token';
const HASH_SETTING = 'admin_token_hash';

/**
 * The admin token's hash: from TOLLGATE_ADMIN_TOKEN when set, else the stored hash, else a new token (first writer wins across
 * processes). A token stored in clear by an older version is replaced by its hash, so the same token keeps working.
 */
export async function settleAdminToken(settings: SettingsStore, configured: string | undefined): Promise<AdminTokenState> {
  const legacy = await settings.get(LEGACY_SETTING);
  if (legacy !== undefined) {
    await settings.getOrSet(HASH_SETTING, sha256Hex(legacy));
    await settings.delete(LEGACY_SETTING);
  }
  if (configured) return { hash: sha256Hex(configured), generated: undefined };
  const stored = await settings.get(HASH_SETTING);
  if (stored !== undefined) return { hash: stored, generated: undefined };
  const token = `tga-${randomBase62(40)}`;
  const hash = await settings.getOrSet(HASH_SETTING, sha256Hex(token));
  return { hash, generated: hash === sha256Hex(token) ? token : undefined };
}
