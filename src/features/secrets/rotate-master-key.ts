import { generateMasterKey, parseMasterKey, rotateKeyFiles, type MasterKeys } from '../../lib/master-key.ts';
import { SecretBox } from '../../lib/secret-box.ts';
import { resealSecrets, type ResealReport, type SealedValuesRepository } from './reseal-secrets.ts';

export interface RotationInput {
  repository: SealedValuesRepository;
  dataDir: string;
  keys: MasterKeys;
  /** The new key as text (`--key`); a fresh random key when absent. */
  nextKeyText: string | undefined;
  legacySecret: string | undefined;
}

export interface RotationResult {
  previousKeyId: string;
  keyId: string;
  /** The new key, for the operator to put in TOLLGATE_SECRET_KEY (set when the key lives in the environment). */
  next: Buffer;
  resealed: ResealReport;
}

/**
 * `tollgate secrets rotate`: makes a new master key current and keeps the old one as previous, then reseals every stored
 * secret under the new key. Everything is first brought under the current key (refusing, before any change, when some value
 * opens under no key it has), and the key files are written before anything is resealed under the new key, so no crash
 * leaves a value sealed under a key that is not on disk.
 */
export async function rotateMasterKey(input: RotationInput): Promise<RotationResult> {
  const next = input.nextKeyText ? parseMasterKey(input.nextKeyText, '--key') : generateMasterKey();
  const opener = new SecretBox(input.keys.current, input.keys.previous);
  await resealSecrets(input.repository, opener, opener, input.legacySecret);
  const target = new SecretBox(next, [input.keys.current]);
  if (target.keyId === opener.keyId) throw new Error('--key: is the current master key');
  if (input.keys.source === 'file') rotateKeyFiles(input.dataDir, input.keys.current, next);
  const resealed = await resealSecrets(input.repository, target, target, undefined);
  return { previousKeyId: opener.keyId, keyId: target.keyId, next, resealed };
}
