import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crossedBelow } from '../billing/ledger.ts';
import { mailHost } from './mail-outbox.ts';
import { retryDelayMs } from './mail-sender.ts';
import { invitationMail } from './templates.ts';
import { limitLevel } from '../keys/key-spend.ts';

test('a name chosen by a customer is escaped in the HTML part and kept as written in the text part', () => {
  const mail = invitationMail({ orgName: '<script>alert(1)</script> & Co', inviter: 'Eve "the" Owner', role: 'member', url: 'https://gw.example.com/invite/tgi-abc?x=1&y=2', expiresAt: Date.parse('2026-11-08T00:00:00Z') });
  assert.ok(!mail.html.includes('<script>'));
  assert.ok(mail.html.includes('&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co'));
  assert.ok(mail.html.includes('href="https://gw.example.com/invite/tgi-abc?x=1&amp;y=2"'));
  assert.ok(mail.text.includes('<script>alert(1)</script> & Co'));
  assert.ok(mail.text.includes('\nhttps://gw.example.com/invite/tgi-abc?x=1&y=2\n'), 'the link stands on its own line');
  assert.ok(mail.text.includes('2026-11-08 00:00 UTC'));
});

test('retries wait 5 s, doubling, and never more than 15 minutes', () => {
  assert.deepEqual([0, 1, 2, 3].map(retryDelayMs), [5_000, 10_000, 20_000, 40_000]);
  assert.equal(retryDelayMs(8), 15 * 60_000);
  assert.equal(retryDelayMs(10_000), 15 * 60_000);
});

test('Message-IDs are made on the host of the From address', () => {
  assert.equal(mailHost('Tollgate <no-reply@mail.example.com>'), 'mail.example.com');
  assert.equal(mailHost('ops@example.org'), 'example.org');
  assert.equal(mailHost('no address'), 'localhost');
});

test('a low-balance crossing is from at-or-above to below; a key alert level is 80 % from four fifths, 100 % at the limit', () => {
  assert.equal(crossedBelow({ before: 500n, after: 499n }, 500n), true);
  assert.equal(crossedBelow({ before: 501n, after: 500n }, 500n), false, 'at the threshold is not below it');
  assert.equal(crossedBelow({ before: 499n, after: 400n }, 500n), false, 'already below: no new crossing');
  assert.equal(crossedBelow({ before: 400n, after: 600n }, 500n), false);
  assert.deepEqual([79n, 80n, 99n, 100n, 150n].map((spent) => limitLevel(spent, 100n)), [0, 80, 80, 100, 100]);
  assert.equal(limitLevel(10n, 0n), 0, 'a zero limit refuses every call and never alerts');
});
