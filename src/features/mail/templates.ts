import type { MailContent } from './mail.ts';

const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);

/** One message in both forms from the same paragraphs; a link is shown as its own paragraph in both. */
function compose(subject: string, paragraphs: ReadonlyArray<string | { link: string }>): MailContent {
  const text = paragraphs.map((paragraph) => (typeof paragraph === 'string' ? paragraph : paragraph.link)).join('\n\n');
  const html = paragraphs
    .map((paragraph) =>
      typeof paragraph === 'string' ? `<p>${escapeHtml(paragraph)}</p>` : `<p><a href="${escapeHtml(paragraph.link)}">${escapeHtml(paragraph.link)}</a></p>`,
    )
    .join('\n');
  return { subject, text: `${text}\n`, html: `<!doctype html>\n<html><body>\n${html}\n</body></html>\n` };
}

const when = (ms: number): string => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function passwordResetMail(input: { url: string; expiresAt: number }): MailContent {
  return compose('Reset your password', [
    'Someone asked to reset the password of your account. Open this link to choose a new one:',
    { link: input.url },
    `The link works once and expires at ${when(input.expiresAt)}. If you did not ask for this, ignore this message: your password stays as it is.`,
  ]);
}

export function emailChangeMail(input: { url: string; email: string; expiresAt: number }): MailContent {
  return compose('Confirm your new email address', [
    `Open this link to make ${input.email} the sign-in email of your account:`,
    { link: input.url },
    `The link works once and expires at ${when(input.expiresAt)}. If you did not ask for this, ignore this message.`,
  ]);
}

export function emailChangedMail(input: { email: string }): MailContent {
  return compose('Your sign-in email was changed', [
    `The sign-in email of your account is now ${input.email}; this address no longer signs in.`,
    'If you did not make this change, contact the operator of the service at once.',
  ]);
}

export function invitationMail(input: { orgName: string; inviter: string; role: string; url: string; expiresAt: number }): MailContent {
  return compose(`You are invited to join ${input.orgName}`, [
    `${input.inviter} invited you to join the organization ${input.orgName} as ${input.role}. Open this link to accept:`,
    { link: input.url },
    `The invitation expires at ${when(input.expiresAt)}.`,
  ]);
}

export function lowBalanceMail(input: { account: string; balance: string; threshold: string; currency: string }): MailContent {
  return compose(`Low balance: ${input.balance} ${input.currency} left`, [
    `The balance of ${input.account} fell below ${input.threshold} ${input.currency}; it is now ${input.balance} ${input.currency}.`,
    'Top it up to keep your API keys working. You hear from us again only after the balance has been above the threshold once more.',
  ]);
}

export function keyLimitMail(input: { key: string; percent: number; spent: string; limit: string; period: string; currency: string }): MailContent {
  const period = input.period === 'total' ? 'in total' : `this ${input.period} (UTC)`;
  const reached = input.percent >= 100 ? 'has reached its spend limit and is refused until the period ends or the limit is raised' : `has used ${input.percent} % of its spend limit`;
  return compose(`API key ${input.key}: ${input.percent} % of its limit`, [
    `Your API key ${input.key} ${reached}: ${input.spent} of ${input.limit} ${input.currency} ${period}.`,
  ]);
}

export function autoRechargeFailedMail(input: { account: string; amount: string; currency: string; card: string; reason: string; url: string }): MailContent {
  return compose(`Auto-recharge failed: ${input.amount} ${input.currency} not charged`, [
    `The balance of ${input.account} fell below its auto-recharge threshold, and charging ${input.card} ${input.amount} ${input.currency} failed: ${input.reason}.`,
    'Nothing was charged. Auto-recharge stays on: it tries again when the balance next falls below the threshold (at most once an hour), or when a card is saved. To keep your API keys working, top up or save another card on the billing page:',
    { link: input.url },
  ]);
}
