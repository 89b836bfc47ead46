import { LEGACY_PURPOSE, openLegacySealed, sealedKeyId, type SecretBox } from '../../lib/secret-box.ts';
import type { SealedValue } from '../../storage/sealed-values-repository.ts';

export interface SealedValuesRepository {
  list(): Promise<SealedValue[]>;
  replace(value: SealedValue, text: string): Promise<boolean>;
}

export interface ResealReport {
  /** Values already sealed under the target key. */
  current: number;
  /** Values moved from a previous master key. */
  fromPreviousKey: number;
  /** Values sealed the old way (the key derived from the database's hash_secret) or provider keys stored in clear. */
  upgraded: number;
  /** Values that open under no key though their key is known (altered, or sealed the old way under another hash_secret): left as they are. */
  broken: number;
}

/** A sealed value no key of this gateway opens: starting anyway would silently break bots, webhooks or providers. */
export class UnopenableSecretsError extends Error {
  constructor(readonly values: readonly SealedValue[]) {
    const keyIds = [...new Set(values.map((value) => sealedKeyId(value.text) ?? 'none'))].join(', ');
    super(
      `${values.length} stored secret(s) are sealed under a master key this gateway does not have (key id ${keyIds}). ` +
        'Set TOLLGATE_SECRET_KEY (or restore DATA_DIR/secret.key) to the key this database was sealed with; ' +
        'after a rotation the old key goes in TOLLGATE_SECRET_KEY_PREVIOUS or DATA_DIR/secret.key.previous.',
    );
    this.name = 'UnopenableSecretsError';
  }
}

function openAny(value: SealedValue, opener: SecretBox, legacySecret: string | undefined): { plain: string; legacy: boolean } | undefined {
  if (sealedKeyId(value.text) !== undefined) {
    const plain = opener.open(value.text);
    return plain === undefined ? undefined : { plain, legacy: false };
  }
  // Provider API keys were kept in clear; bot tokens and webhook keys were sealed under the hash_secret-derived key.
  // Migration 0026 moved them, as they were, into their provider's first channel.
  if (value.column === 'providers.api_key' || value.column === 'provider_channels.api_key') return { plain: value.text, legacy: true };
  const plain = legacySecret === undefined ? undefined : openLegacySealed(value.text, legacySecret, LEGACY_PURPOSE);
  return plain === undefined ? undefined : { plain, legacy: true };
}

/**
 * Brings every stored secret under `target`'s current key: values under a previous key (opened by `opener`), values sealed the
 * old way, provider keys in clear. Runs on every start (cheap when all is current) and on `tollgate secrets rotate`.
 * Throws UnopenableSecretsError, before changing anything, when some value is sealed under a key `opener` does not hold.
 */
export async function resealSecrets(repository: SealedValuesRepository, opener: SecretBox, target: SecretBox, legacySecret?: string): Promise<ResealReport> {
  const report: ResealReport = { current: 0, fromPreviousKey: 0, upgraded: 0, broken: 0 };
  const values = await repository.list();
  const pending: Array<{ value: SealedValue; plain: string; legacy: boolean }> = [];
  const unopenable: SealedValue[] = [];
  for (const value of values) {
    if (!target.isStale(value.text) && target.open(value.text) !== undefined) {
      report.current++;
      continue;
    }
    const opened = openAny(value, opener, legacySecret);
    if (opened) pending.push({ value, ...opened });
    else if (sealedKeyId(value.text) !== undefined && !opener.holdsKeyOf(value.text)) unopenable.push(value);
    else report.broken++;
  }
  if (unopenable.length > 0) throw new UnopenableSecretsError(unopenable);
  for (const { value, plain, legacy } of pending) {
    if (!(await repository.replace(value, target.seal(plain)))) continue;
    if (legacy) report.upgraded++;
    else report.fromPreviousKey++;
  }
  return report;
}
