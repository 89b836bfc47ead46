import type { User } from '../../../features/accounts/accounts.ts';
import type { KeyDetails } from '../../../features/keys/keys-service.ts';
import type { ApiKey } from '../../../features/keys/keys.ts';
import { formatMoney } from '../../../lib/money.ts';

/** A user as the management API shows it (never a password hash). */
export const userView = (user: User) => ({ id: user.id, email: user.email, name: user.name, balance: formatMoney(user.balance), operator: user.operator });

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A key without its secret. */
export const keyView = (key: ApiKey) => ({
  id: key.id,
  name: key.name,
  scope: key.scope,
  userId: key.userId,
  orgId: key.orgId,
  allowedModels: key.allowedModels,
  expiresAt: iso(key.expiresAt),
  disabled: key.disabled,
  limit: key.limit ? { amount: formatMoney(key.limit.amount), period: key.limit.period } : null,
  rpm: key.rateLimit,
  tpm: key.tpm,
  createdAt: iso(key.createdAt),
});

/** A key as its lists show it: without its secret, with its start, use and spending in the limit's period. */
export const keyDetailsView = (details: KeyDetails) => ({
  ...keyView(details.key),
  start: `${details.key.start}…`,
  lastUsedAt: iso(details.key.lastUsedAt),
  revokedAt: iso(details.key.revokedAt),
  spent: formatMoney(details.spent),
  remaining: details.remaining === null ? null : formatMoney(details.remaining),
});
