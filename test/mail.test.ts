import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { formatMoney, parseMoney } from '../src/lib/money.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { addressesOf, linkIn, startMailServer, type TestMailServer } from './helpers/mail-server.ts';
import { createCustomer, signIn, type Customer } from './helpers/management.ts';

const HOUR_MS = 3_600_000;

const post = async (gw: TestGateway, path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
  const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

const login = async (gw: TestGateway, email: string, password: string): Promise<number> => (await post(gw, '/api/v1/auth/login', { email, password })).status;

/** Runs the mail jobs until the server holds `count` messages (alerts are queued a moment after the charge that caused them). */
async function deliver(gw: TestGateway, mail: TestMailServer, count: number): Promise<void> {
  for (let round = 0; round < 100 && mail.messages.length < count; round++) {
    await gw.app.services.runner.runDue();
    if (mail.messages.length < count) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(mail.messages.length, count, `expected ${count} messages, got: ${mail.messages.map((message) => message.subject).join(' | ')}`);
}

/** Nothing more arrives: jobs run again, later, and the count stays. */
async function nothingMore(gw: TestGateway, mail: TestMailServer): Promise<void> {
  const count = mail.messages.length;
  for (let round = 0; round < 3; round++) {
    gw.clock.advance(20 * 60_000);
    await gw.app.services.runner.runDue();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.equal(mail.messages.length, count, 'no message arrives twice');
}

const adjust = async (gw: TestGateway, account: { userId?: string; orgId?: string }, amount: string): Promise<void> => {
  const response = await gw.admin('POST', '/balance', { ...account, amount });
  assert.equal(response.status, 200, JSON.stringify(response.body));
};

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`mail (${database})`, () => {
    let gw: TestGateway;
    let mail: TestMailServer;

    before(async () => {
      mail = await startMailServer();
      gw = await startTestGateway({ database, config: { smtpUrl: mail.url, mailFrom: 'Tollgate <no-reply@tollgate.test>' } });
    });
    after(async () => {
      await gw?.close();
      await mail?.close();
    });

    const fresh = (): void => void mail.messages.splice(0);

    test('password reset: the mailed link sets a new password once, signs the user out everywhere, and a second use is a 400', async () => {
      fresh();
      const customer = await createCustomer(gw);
      const browser = await signIn(gw, customer);
      const asked = await post(gw, '/api/v1/auth/password-reset', { email: customer.email.toUpperCase() });
      assert.deepEqual(asked, { status: 200, body: { ok: true } });
      await deliver(gw, mail, 1);
      const [message] = mail.messages;
      assert.deepEqual(addressesOf(message!), [customer.email]);
      assert.equal(message!.subject, 'Reset your password');
      assert.equal(message!.from?.value[0]?.address, 'no-reply@tollgate.test');
      assert.match(message!.messageId ?? '', /^<mail_[0-9A-Za-z]+@tollgate\.test>$/);
      const link = linkIn(message!, '/reset/');
      assert.equal(link.url, `${gw.url}/reset/${link.token}`);
      assert.ok(String(message!.html).includes(link.url), 'the HTML part carries the same link');

      // Opening the page does not use the link.
      const checked = await fetch(`${gw.url}/api/v1/auth/password-reset/${link.token}`);
      assert.equal(checked.status, 200);
      assert.equal((await checked.json() as { valid: boolean }).valid, true);

      const confirmed = await post(gw, '/api/v1/auth/password-reset/confirm', { token: link.token, password: 'a brand new password' });
      assert.deepEqual(confirmed, { status: 200, body: { ok: true } });
      assert.equal(await login(gw, customer.email, customer.password), 401, 'the old password no longer works');
      assert.equal(await login(gw, customer.email, 'a brand new password'), 200);
      assert.equal((await browser.call('GET', '/me')).status, 401, 'the sessions open before the reset are ended');

      const again = await post(gw, '/api/v1/auth/password-reset/confirm', { token: link.token, password: 'yet another password' });
      assert.equal(again.status, 400);
      assert.deepEqual(again.body, { error: { message: 'This reset link was already used or has expired; ask for a new one.', type: 'invalid_request_error', param: 'token', code: 'invalid_token' } });
      assert.equal(await login(gw, customer.email, 'yet another password'), 401);
      assert.equal((await fetch(`${gw.url}/api/v1/auth/password-reset/${link.token}`)).status, 400);
    });

    test('password reset: a link expires after one hour; an unknown email gets the same answer and no mail', async () => {
      fresh();
      const customer = await createCustomer(gw);
      assert.deepEqual(await post(gw, '/api/v1/auth/password-reset', { email: customer.email }), { status: 200, body: { ok: true } });
      const unknown = await post(gw, '/api/v1/auth/password-reset', { email: `nobody-${randomBytes(4).toString('hex')}@example.com` });
      assert.deepEqual(unknown, { status: 200, body: { ok: true } });
      await deliver(gw, mail, 1);
      assert.deepEqual(addressesOf(mail.messages[0]!), [customer.email], 'only the known address got mail');
      const { token } = linkIn(mail.messages[0]!, '/reset/');
      gw.clock.advance(HOUR_MS + 1_000);
      const late = await post(gw, '/api/v1/auth/password-reset/confirm', { token, password: 'too late password' });
      assert.equal(late.status, 400);
      assert.equal((late.body.error as { code: string }).code, 'invalid_token');
      assert.equal(await login(gw, customer.email, customer.password), 200, 'the password is unchanged');
      await nothingMore(gw, mail);
    });

    test('password reset: requests are throttled per email (429), whether or not it has an account', async () => {
      const email = `throttled-${randomBytes(4).toString('hex')}@example.com`;
      for (let attempt = 0; attempt < 5; attempt++) assert.equal((await post(gw, '/api/v1/auth/password-reset', { email })).status, 200);
      const refused = await fetch(`${gw.url}/api/v1/auth/password-reset`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) > 0);
      const short = await post(gw, '/api/v1/auth/password-reset/confirm', { token: 'x', password: 'short' });
      assert.equal(short.status, 400, 'the password rule of every door');
    });

    test('the operator issues a reset link without mail (admin API), audited; it works once', async () => {
      fresh();
      const customer = await createCustomer(gw);
      const issued = await gw.admin<{ url: string; expiresAt: string }>('POST', `/users/${customer.userId}/password-reset`);
      assert.equal(issued.status, 200);
      assert.equal(Date.parse(issued.body.expiresAt), gw.clock.now() + HOUR_MS);
      const token = issued.body.url.split('/reset/')[1]!;
      assert.equal(issued.body.url, `${gw.url}/reset/${token}`);
      assert.equal((await post(gw, '/api/v1/auth/password-reset/confirm', { token, password: 'operator given password' })).status, 200);
      assert.equal(await login(gw, customer.email, 'operator given password'), 200);
      assert.equal((await post(gw, '/api/v1/auth/password-reset/confirm', { token, password: 'operator given again' })).status, 400);
      const audit = await gw.admin<{ data: Array<{ action: string; actor: { type: string } }> }>('GET', `/audit?targetId=${customer.userId}&action=user.password_reset_link`);
      assert.equal(audit.body.data.length, 1);
      assert.equal(audit.body.data[0]!.actor.type, 'admin');
      assert.equal((await gw.admin('POST', '/users/usr_missing/password-reset')).status, 404);
      assert.equal(mail.messages.length, 0, 'the operator door sends no mail');
    });

    test('email change: the new address gets a confirmation link; the email changes only when it is opened, and the old address is told', async () => {
      fresh();
      const customer = await createCustomer(gw);
      const browser = await signIn(gw, customer);
      const newEmail = `moved-${randomBytes(4).toString('hex')}@example.com`;
      const wrong = await browser.call('PATCH', '/me', { email: newEmail, currentPassword: 'not my password' });
      assert.equal(wrong.status, 403);
      const taken = await browser.call('PATCH', '/me', { email: (await createCustomer(gw)).email, currentPassword: customer.password });
      assert.equal(taken.status, 409);
      const asked = await browser.call<{ email: string; emailChange: { email: string } }>('PATCH', '/me', { email: newEmail, currentPassword: customer.password });
      assert.equal(asked.status, 200);
      assert.equal(asked.body.email, customer.email, 'unchanged until confirmed');
      assert.equal(asked.body.emailChange.email, newEmail);
      await deliver(gw, mail, 1);
      assert.deepEqual(addressesOf(mail.messages[0]!), [newEmail]);
      const { token, url } = linkIn(mail.messages[0]!, '/confirm-email/');
      assert.equal(url, `${gw.url}/confirm-email/${token}`);
      assert.equal(await login(gw, customer.email, customer.password), 200, 'the old email signs in until the change is confirmed');

      assert.deepEqual(await post(gw, '/api/v1/auth/email-change/confirm', { token }), { status: 200, body: { ok: true, email: newEmail } });
      assert.equal(await login(gw, newEmail, customer.password), 200);
      assert.equal(await login(gw, customer.email, customer.password), 401);
      await deliver(gw, mail, 2);
      assert.deepEqual(addressesOf(mail.messages[1]!), [customer.email]);
      assert.match(mail.messages[1]!.text ?? '', new RegExp(newEmail.replace(/\./g, '\\.')));
      assert.equal((await post(gw, '/api/v1/auth/email-change/confirm', { token })).status, 400, 'a link works once');
    });

    test('an invitation is mailed to the invitee; its link accepts', async () => {
      fresh();
      const owner = await createCustomer(gw, { name: 'Olivia Owner' });
      const ownerBrowser = await signIn(gw, owner);
      const org = await ownerBrowser.call<{ id: string }>('POST', '/orgs', { name: 'Acme Research' });
      const invitee = await createCustomer(gw);
      const invited = await ownerBrowser.call<{ url: string; token: string }>('POST', `/orgs/${org.body.id}/invitations`, { email: invitee.email, role: 'member' });
      assert.equal(invited.status, 200);
      assert.ok(invited.body.url, 'the answer keeps the url (consoles without mail show it)');
      await deliver(gw, mail, 1);
      const message = mail.messages[0]!;
      assert.deepEqual(addressesOf(message), [invitee.email]);
      assert.match(message.subject ?? '', /Acme Research/);
      assert.match(message.text ?? '', /Olivia Owner/);
      const link = linkIn(message, '/invite/');
      assert.equal(link.url, invited.body.url);
      const inviteeBrowser = await signIn(gw, invitee);
      const accepted = await inviteeBrowser.call<{ orgId: string; role: string }>('POST', `/invitations/${link.token}/accept`, {});
      assert.equal(accepted.status, 200);
      assert.deepEqual({ orgId: accepted.body.orgId, role: accepted.body.role }, { orgId: org.body.id, role: 'member' });
    });

    test('low balance: one mail per crossing; a credit above the threshold re-arms it', async () => {
      fresh();
      const customer = await createCustomer(gw, { balance: '10.00' });
      const browser = await signIn(gw, customer);
      assert.equal((await browser.call('PATCH', '/me', { lowBalanceAlert: '-1' })).status, 400);
      const set = await browser.call<{ lowBalanceAlert: string }>('PATCH', '/me', { lowBalanceAlert: '5.00' });
      assert.equal(set.status, 200);
      assert.equal(set.body.lowBalanceAlert, '5.00');
      assert.equal((await browser.call<{ lowBalanceAlert: string }>('GET', '/me')).body.lowBalanceAlert, '5.00');
      const account = { userId: customer.userId };
      await adjust(gw, account, '-3.00'); // 7.00: above
      await adjust(gw, account, '-2.00'); // 5.00: at the threshold is not below it
      await adjust(gw, account, '-0.01'); // 4.99: crossed
      await adjust(gw, account, '-1.00'); // 3.99: still below, no new mail
      await deliver(gw, mail, 1);
      assert.deepEqual(addressesOf(mail.messages[0]!), [customer.email]);
      assert.match(mail.messages[0]!.subject ?? '', /Low balance: 4\.99 USD left/);
      await nothingMore(gw, mail);
      await adjust(gw, account, '0.50'); // 4.49: a credit still below does not re-arm
      await adjust(gw, account, '-0.10');
      await nothingMore(gw, mail);
      await adjust(gw, account, '2.00'); // 6.39: re-armed
      await adjust(gw, account, '-2.00'); // 4.39: crossed again
      await deliver(gw, mail, 2);
      assert.match(mail.messages[1]!.subject ?? '', /4\.39/);
      await nothingMore(gw, mail);
      const cleared = await browser.call<{ lowBalanceAlert: null }>('PATCH', '/me', { lowBalanceAlert: null });
      assert.equal(cleared.body.lowBalanceAlert, null);
    });

    test('low balance of an org mails its owners, not its other members; only owners and admins set the threshold', async () => {
      fresh();
      const first = await createCustomer(gw);
      const second = await createCustomer(gw);
      const member = await createCustomer(gw);
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Shared Co', ownerId: first.userId, balance: '20.00' });
      await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: second.userId, role: 'owner' });
      await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.userId, role: 'member' });
      const memberBrowser = await signIn(gw, member);
      assert.equal((await memberBrowser.call('PATCH', `/orgs/${org.body.id}`, { lowBalanceAlert: '10.00' })).status, 403);
      const ownerBrowser = await signIn(gw, first);
      const patched = await ownerBrowser.call<{ lowBalanceAlert: string }>('PATCH', `/orgs/${org.body.id}`, { lowBalanceAlert: '10.00' });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.lowBalanceAlert, '10.00');
      assert.equal((await memberBrowser.call<{ lowBalanceAlert: string }>('GET', `/orgs/${org.body.id}`)).body.lowBalanceAlert, '10.00');
      await adjust(gw, { orgId: org.body.id }, '-15.00');
      await deliver(gw, mail, 2);
      const recipients = mail.messages.flatMap(addressesOf).sort();
      assert.deepEqual(recipients, [first.email, second.email].sort());
      assert.match(mail.messages[0]!.text ?? '', /Shared Co/);
      await nothingMore(gw, mail);
    });

    test('a key reaching 80 % and 100 % of its limit mails its owner once each', async () => {
      fresh();
      const customer = await createCustomer(gw, { balance: '5.00' });
      const browser = await signIn(gw, customer);
      const content = `alerts ${randomBytes(4).toString('hex')}`;
      const chat = (key: string) =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
        });
      // One call's cost, measured on a key without a limit.
      const probe = await browser.call<{ id: string; key: string }>('POST', '/keys', { name: 'probe' });
      assert.equal((await chat(probe.body.key)).status, 200);
      await gw.app.services.book.flush();
      const cost = parseMoney((await browser.call<{ spent: string }>('GET', `/keys/${probe.body.id}`)).body.spent)!;
      assert.ok(cost > 0n);
      // One call is exactly 80 % of the limit; the second passes 100 %.
      const limited = await browser.call<{ id: string; key: string }>('POST', '/keys', { name: 'budget', limit: { amount: formatMoney((cost * 5n) / 4n, 9), period: 'day' } });
      assert.equal(limited.status, 200, JSON.stringify(limited.body));
      assert.equal((await chat(limited.body.key)).status, 200);
      await deliver(gw, mail, 1);
      assert.match(mail.messages[0]!.subject ?? '', /^API key "budget" \(key_\w+\): 80 % of its limit$/);
      assert.deepEqual(addressesOf(mail.messages[0]!), [customer.email]);
      assert.equal((await chat(limited.body.key)).status, 200);
      await deliver(gw, mail, 2);
      assert.match(mail.messages[1]!.subject ?? '', /100 %/);
      assert.equal((await chat(limited.body.key)).status, 402, 'the limit is reached');
      await nothingMore(gw, mail);

      // A limit below one call's cost: the first call jumps past 80 % and 100 % at once, and both messages come, once each.
      fresh();
      const small = await browser.call<{ id: string; key: string }>('POST', '/keys', { name: 'small', limit: { amount: formatMoney(cost / 2n, 9), period: 'day' } });
      assert.equal(small.status, 200, JSON.stringify(small.body));
      assert.equal((await chat(small.body.key)).status, 200);
      await deliver(gw, mail, 2);
      assert.deepEqual(mail.messages.map((message) => / (\d+) % /.exec(message.subject ?? '')?.[1]).sort(), ['100', '80']);
      assert.equal((await chat(small.body.key)).status, 402);
      await nothingMore(gw, mail);
    });

    test('a mail server that is down delays mail: requests answer at once, readiness is unaffected, and every message arrives once when it is back', async () => {
      fresh();
      const customers: Customer[] = [await createCustomer(gw), await createCustomer(gw)];
      await mail.stop();
      try {
        for (const customer of customers) {
          const started = performance.now();
          assert.equal((await post(gw, '/api/v1/auth/password-reset', { email: customer.email })).status, 200);
          assert.ok(performance.now() - started < 1_000, 'the request does not wait for the mail server');
        }
        // Both messages are queued (a moment after the answer) and their first attempts fail.
        let metrics = '';
        for (let round = 0; round < 100 && !/tollgate_mail_messages\{status="pending"\} 2/.test(metrics); round++) {
          await gw.app.services.runner.runDue();
          metrics = await (await fetch(`${gw.url}/metrics`)).text();
        }
        assert.match(metrics, /tollgate_mail_messages\{status="pending"\} 2/);
        await gw.app.services.runner.runDue();
        assert.equal(mail.messages.length, 0);
        assert.equal((await fetch(`${gw.url}/readyz`)).status, 200, 'mail is not readiness');
      } finally {
        await mail.start();
      }
      gw.clock.advance(60_000);
      await deliver(gw, mail, 2);
      assert.deepEqual(mail.messages.flatMap(addressesOf).sort(), customers.map((customer) => customer.email).sort());
      await nothingMore(gw, mail);
      assert.match(await (await fetch(`${gw.url}/metrics`)).text(), /tollgate_mail_messages\{status="pending"\} 0/);
    });
  });
}

describe('mail without a mail server', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('reset requests still answer 200, invitations answer their url to pass on, and nothing is queued', async () => {
    const customer = await createCustomer(gw);
    assert.deepEqual(await post(gw, '/api/v1/auth/password-reset', { email: customer.email }), { status: 200, body: { ok: true } });
    const browser = await signIn(gw, customer);
    const org = await browser.call<{ id: string }>('POST', '/orgs', { name: 'No Mail Inc' });
    const invited = await browser.call<{ url: string }>('POST', `/orgs/${org.body.id}/invitations`, { email: 'someone@example.com', role: 'member' });
    assert.match(invited.body.url, /\/invite\/tgi-/);
    assert.deepEqual(await gw.app.services.mail.counts(), { pending: 0, failed: 0 });
    const change = await browser.call('PATCH', '/me', { email: 'elsewhere@example.com', currentPassword: customer.password });
    assert.equal(change.status, 409, 'a new email cannot be confirmed without mail');
  });
});

test('the CLI prints a reset link on TOLLGATE_PUBLIC_URL (audited) that a gateway on the same database accepts once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-mail-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_PUBLIC_URL: 'https://gateway.example.com' };
  const cli = async (...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, '..', 'bin', 'tollgate.js'), ...args], { env });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  try {
    const user = await cli('users', 'create', '--name', 'forgetful');
    await cli('users', 'update', String(user.id), '--email', 'forgetful@example.com', '--password', 'first password');
    const link = await cli('users', 'reset-link', String(user.id));
    assert.match(String(link.url), /^https:\/\/gateway\.example\.com\/reset\/tgr-[0-9A-Za-z]{40}$/);
    assert.ok(Date.parse(String(link.expiresAt)) > Date.now() + 59 * 60_000);
    const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      gw.clock.set(Date.now());
      const token = String(link.url).split('/reset/')[1]!;
      assert.equal((await post(gw, '/api/v1/auth/password-reset/confirm', { token, password: 'second password' })).status, 200);
      assert.equal(await login(gw, 'forgetful@example.com', 'second password'), 200);
      assert.equal((await post(gw, '/api/v1/auth/password-reset/confirm', { token, password: 'third password' })).status, 400);
      const audit = await gw.admin<{ data: Array<{ action: string }> }>('GET', `/audit?targetId=${String(user.id)}`);
      assert.deepEqual(audit.body.data.map((entry) => entry.action).filter((action) => action.startsWith('user.password_reset')).sort(), ['user.password_reset', 'user.password_reset_link']);
    } finally {
      await gw.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
