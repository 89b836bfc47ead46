import { formatMoney } from '../../lib/money.ts';
import type { LimitLevel } from '../keys/key-spend.ts';
import type { MailOutbox } from './mail-outbox.ts';
import { keyLimitMail } from './templates.ts';

/**
 * A key reaching 80 % and 100 % of its spend limit mails its owner once each per period (DESIGN §15). Each process's spend
 * book notices the level as charges are recorded (off the request path); the message's dedupe key (key, period, limit,
 * level) makes the outbox keep one of them however many processes notice it, and after restarts. A spend that jumps past
 * both levels at once mails the 100 % message only.
 */
export class KeyLimitAlerts {
  constructor(
    private readonly mail: MailOutbox,
    private readonly currency: string,
  ) {}

  readonly reached = async ({ key, limit, level, spent, periodStart }: LimitLevel): Promise<void> => {
    if (!this.mail.enabled) return;
    const to = await this.mail.userEmail(key.userId);
    if (!to) return;
    const content = keyLimitMail({
      key: key.name ? `"${key.name}" (${key.id})` : key.id,
      percent: level,
      spent: formatMoney(spent),
      limit: formatMoney(limit.amount),
      period: limit.period,
      currency: this.currency,
    });
    await this.mail.queue({ kind: 'key_limit', to, dedupeKey: `key-limit:${key.id}:${limit.period}:${periodStart}:${limit.amount}:${level}`, ...content });
  };
}
