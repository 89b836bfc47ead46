import type { Clock } from '../../lib/clock.ts';
import { formatMoney, type Money } from '../../lib/money.ts';
import type { LedgerWrite } from '../billing/ledger.ts';
import { limitLevel } from '../keys/key-spend.ts';
import type { SpendLimit } from '../keys/keys.ts';
import { periodStart } from '../keys/spend-periods.ts';
import type { MailOutbox } from './mail-outbox.ts';
import { keyLimitMail } from './templates.ts';

/** A key with a spend limit, as the alert needs it. */
export interface LimitedKey {
  id: string;
  userId: string;
  name: string | null;
  limit: SpendLimit;
}

/** The keys' side of the alert, read in the ledger write's transaction. */
export interface LimitedKeys {
  /** Those of `ids` that have a spend limit, locked until the transaction ends (PostgreSQL: in id order). */
  lockLimited(ids: readonly string[], transaction: unknown): Promise<LimitedKey[]>;
  /** What the key spent since `since` (Σ of its charges and refunds, negated), as the transaction sees it. */
  spentSince(keyId: string, since: number, transaction: unknown): Promise<Money>;
}

/**
 * A key reaching 80 % and 100 % of its spend limit mails its owner once each per period (DESIGN §15), decided where spending
 * is written, like low-balance alerts: the ledger write that inserts a key's charges locks the key's row, sums what the key
 * spent in its period (its own entries included) and compares the levels before and after its entries. Writes of several
 * processes take turns on the lock, and each sees those committed before it, so each level is crossed by exactly one write,
 * however the calls were spread over the processes; the message's dedupe key (key, period, limit, level) is the second guard.
 * A write that jumps past both levels at once (a batch of calls, or one large one) mails both messages: each level's mail
 * comes once, whatever the batches were. Nothing runs on the request path.
 */
export class KeyLimitAlerts {
  constructor(
    private readonly mail: MailOutbox,
    private readonly keys: LimitedKeys,
    private readonly clock: Clock,
    private readonly currency: string,
  ) {}

  readonly watch = async ({ inserted }: LedgerWrite, transaction: unknown): Promise<void> => {
    if (!this.mail.enabled) return;
    const spentNow = new Map<string, Array<{ amount: Money; createdAt: number }>>();
    for (const entry of inserted) {
      if (entry.keyId === null || (entry.kind !== 'charge' && entry.kind !== 'refund')) continue;
      const list = spentNow.get(entry.keyId) ?? [];
      list.push(entry);
      spentNow.set(entry.keyId, list);
    }
    if (spentNow.size === 0) return;
    const now = this.clock.now();
    for (const key of await this.keys.lockLimited([...spentNow.keys()].sort(), transaction)) {
      const start = periodStart(key.limit.period, now);
      const after = await this.keys.spentSince(key.id, start, transaction);
      const written = (spentNow.get(key.id) ?? []).filter((entry) => entry.createdAt >= start).reduce((total, entry) => total - entry.amount, 0n);
      const before = limitLevel(after - written, key.limit.amount);
      const reached = limitLevel(after, key.limit.amount);
      for (const level of [80, 100] as const) if (before < level && reached >= level) await this.queue(key, level, after, start, transaction);
    }
  };

  private async queue(key: LimitedKey, level: 80 | 100, spent: Money, start: number, transaction: unknown): Promise<void> {
    const to = await this.mail.userEmail(key.userId, transaction);
    if (!to) return;
    const content = keyLimitMail({
      key: key.name ? `"${key.name}" (${key.id})` : key.id,
      percent: level,
      spent: formatMoney(spent),
      limit: formatMoney(key.limit.amount),
      period: key.limit.period,
      currency: this.currency,
    });
    await this.mail.queue({ kind: 'key_limit', to, dedupeKey: `key-limit:${key.id}:${key.limit.period}:${start}:${key.limit.amount}:${level}`, ...content }, transaction);
  }
}
