import { formatMoney } from '../../lib/money.ts';
import { crossedBelow, type LedgerWrite } from '../billing/ledger.ts';
import type { MailOutbox } from './mail-outbox.ts';
import { lowBalanceMail } from './templates.ts';

/**
 * Low-balance alerts (DESIGN §15), decided where balances move: the ledger write tells of each account's balance before and
 * after, in its transaction, and a crossing queues the mail in that same transaction. So each crossing mails exactly once,
 * however charges are batched and however many processes write (row locks order their writes); a credit that lifts the
 * balance back to the threshold re-arms the alert simply because the next debit below it is a new crossing. Nothing runs
 * on the request path.
 */
export class LowBalanceAlerts {
  constructor(
    private readonly mail: MailOutbox,
    private readonly currency: string,
  ) {}

  readonly watch = async ({ moves }: LedgerWrite, transaction: unknown): Promise<void> => {
    if (!this.mail.enabled) return;
    for (const move of moves) {
      const threshold = move.lowBalanceAlert;
      if (threshold === null || !crossedBelow(move, threshold)) continue;
      const recipients =
        move.account.type === 'user'
          ? [await this.mail.userEmail(move.account.id, transaction)].filter((email): email is string => email !== null)
          : await this.mail.ownerEmails(move.account.id, transaction);
      const account = move.account.type === 'user' ? 'your account' : `the organization ${await this.mail.orgName(move.account.id, transaction)}`;
      const content = lowBalanceMail({ account, balance: formatMoney(move.after), threshold: formatMoney(threshold), currency: this.currency });
      for (const to of recipients) await this.mail.queue({ kind: 'low_balance', to, ...content }, transaction);
    }
  };
}
