import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { KEY_FILE, loadMasterKeys } from '../../lib/master-key.ts';
import { SecretBox } from '../../lib/secret-box.ts';
import { resealSecrets, UnopenableSecretsError, type SealedValuesRepository } from './reseal-secrets.ts';

export interface MasterSecretsOptions {
  dataDir: string;
  secretKey: string | undefined;
  secretKeyPrevious: string | undefined;
  /** The database's hash_secret: it opens values sealed before master keys, once, to reseal them. */
  legacySecret: string | undefined;
}

/**
 * The SecretBox of this start: loads (or creates) the master key, then brings every stored secret under it. Refuses to start
 * when the database holds values sealed under a key this gateway lacks (a copied database, a lost key file).
 */
export async function openMasterSecrets(repository: SealedValuesRepository, options: MasterSecretsOptions, logger: Logger): Promise<SecretBox> {
  const keys = loadMasterKeys({ dataDir: options.dataDir, secretKey: options.secretKey, previousKey: options.secretKeyPrevious });
  if (keys.created) logger.warn({ file: join(options.dataDir, KEY_FILE) }, 'created a new master key: back it up, the secrets in the database open only with it');
  const box = new SecretBox(keys.current, keys.previous);
  try {
    const report = await resealSecrets(repository, box, box, options.legacySecret);
    if (report.fromPreviousKey + report.upgraded > 0) logger.info({ ...report, keyId: box.keyId }, 'resealed stored secrets under the master key');
    if (report.broken > 0) logger.warn({ broken: report.broken }, 'some stored secrets open under no key and were left as they are');
  } catch (error) {
    // A key made just now cannot be the one the database needs; leave no file that would hide the real key's absence.
    if (error instanceof UnopenableSecretsError && keys.created) rmSync(join(options.dataDir, KEY_FILE), { force: true });
    throw error;
  }
  return box;
}
