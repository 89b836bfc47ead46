import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RequestLogRow } from '../src/features/usage/request-log.ts';
import { createAssistant, newMention } from './helpers/assistants-e2e.ts';
import { userWithOrg } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer, managementKey, signIn } from './helpers/management.ts';

type Listed = { id: string; keyId: string; userId: string; orgId: string | null };
type List = { object: string; data: Listed[]; next_cursor: string | null };

/**
 * Who sees which request-log rows (DESIGN §10), now that the log has one index per user and one per org (migration 0029):
 * a user's own account, an org (its owner every row, a member their own), the admin's user, org and key filters — each
 * exactly its rows, newest first, across pages; and on SQLite each listing read through an index in order, not by
 * scanning the table or sorting it.
 */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`request log listings by account, user, org and key (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    test('every scope lists exactly its rows, newest first, page after page', async () => {
      const { userId: ada, orgId } = await userWithOrg(gw, { user: '5.00', org: '5.00' });
      const member = await createCustomer(gw);
      assert.equal((await gw.admin('POST', `/orgs/${orgId}/members`, { userId: member.userId, role: 'member' })).status, 200);
      const other = await createCustomer(gw);
      const keyOf = async (userId: string, org?: string): Promise<string> =>
        (await gw.admin<{ id: string }>('POST', '/keys', { userId, ...(org ? { orgId: org } : {}) })).body.id;
      const adaOwn = await keyOf(ada);
      const adaSecond = await keyOf(ada);
      const adaOrg = await keyOf(ada, orgId);
      const memberOrg = await keyOf(member.userId, orgId);
      const otherOwn = await keyOf(other.userId);
      const { key: adaKeyText } = await gw.fundedKey({ balance: '1.00' });
      const assistant = await createAssistant(gw, adaKeyText, { mention: newMention('scp'), title: 'Scopes', instruction: 'Be brief.', modelId: 'gpt-4o-mini' });
      const bot = await gw.admin<{ id: string }>('POST', '/bots', { userId: ada, assistantId: String(assistant.id), name: 'scopes bot' });
      assert.equal(bot.status, 200);

      // Rows as the writer makes them: an org key pays from its org, or from its user's wallet (useWalletBalance).
      const start = gw.clock.now() - 60_000;
      let made = 0;
      const rows: RequestLogRow[] = [];
      const add = (keyId: string, userId: string, org: string | null, paidByOrg: boolean): void => {
        made += 1;
        rows.push({
          id: `req_scope_${String(made).padStart(3, '0')}_${database}`,
          created: start + made * 10,
          account: paidByOrg ? { type: 'org', id: org! } : { type: 'user', id: userId },
          keyId,
          userId,
          orgId: org,
          endpoint: 'chat.completions',
          model: 'gpt-4o-mini',
          servedModel: 'gpt-4o-mini',
          provider: 'openai',
          channel: null,
          attempts: 1,
          stream: false,
          status: 200,
          errorType: null,
          inputTokens: 1,
          outputTokens: 1,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          cost: 1_000n,
          latencyMs: 1,
          ttftMs: null,
          taskId: null,
        });
      };
      for (let round = 0; round < 3; round++) {
        add(adaOwn, ada, null, false);
        add(adaOrg, ada, orgId, true);
        add(memberOrg, member.userId, orgId, true);
        add(adaSecond, ada, null, false);
        add(adaOrg, ada, orgId, false); // the org key paying from Ada's wallet
        add(otherOwn, other.userId, null, false);
        add(bot.body.id, ada, null, false);
      }
      await gw.app.services.requestLog.idle();
      const repository = (gw.app.services.requestLog as unknown as { repository: { append(rows: RequestLogRow[]): Promise<void> } }).repository;
      await repository.append(rows);

      const expected = (keep: (row: RequestLogRow) => boolean): string[] => rows.filter(keep).map((row) => row.id).reverse();
      /** Every page of a listing, two rows at a time, following next_cursor. */
      const listAll = async (call: (path: string) => Promise<{ status: number; body: List }>, path: string): Promise<string[]> => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const separator = path.includes('?') ? '&' : '?';
          const page = await call(`${path}${separator}limit=2${cursor ? `&cursor=${cursor}` : ''}`);
          assert.equal(page.status, 200, JSON.stringify(page.body));
          ids.push(...page.body.data.map((row) => row.id).filter((id) => id.startsWith('req_scope_')));
          cursor = page.body.next_cursor;
        } while (cursor);
        return ids;
      };
      const admin = (path: string) => gw.admin<List>('GET', path);
      const adaClient = await managementKey(gw, ada);
      const memberClient = await signIn(gw, member);
      const adaLists = (path: string) => adaClient.call<List>('GET', path);
      const memberLists = (path: string) => memberClient.call<List>('GET', path);

      const adaAccount = expected((row) => row.account.type === 'user' && row.account.id === ada);
      assert.equal(adaAccount.length, 12, "Ada's own account: her two keys, the org key paying from her wallet, her bot");
      assert.deepEqual(await listAll(adaLists, '/requests'), adaAccount);
      assert.deepEqual(await listAll(adaLists, `/requests?keyId=${adaOrg}`), expected((row) => row.account.type === 'user' && row.keyId === adaOrg));
      assert.deepEqual(await listAll(adaLists, `/requests?keyId=${otherOwn}`), [], "another user's key finds nothing in Ada's account");
      const orgRows = expected((row) => row.account.type === 'org' && row.account.id === orgId);
      assert.deepEqual(await listAll(adaLists, `/requests?orgId=${orgId}`), orgRows, 'the owner sees every row the org paid');
      assert.deepEqual(await listAll(adaLists, `/requests?orgId=${orgId}&keyId=${memberOrg}`), expected((row) => row.account.type === 'org' && row.keyId === memberOrg));
      assert.deepEqual(await listAll(memberLists, `/requests?orgId=${orgId}`), expected((row) => row.account.type === 'org' && row.userId === member.userId));
      assert.deepEqual(await listAll(memberLists, `/requests?orgId=${orgId}&keyId=${adaOrg}`), [], "a member does not see the owner's rows by naming her key");

      assert.deepEqual(await listAll(admin, `/requests?userId=${ada}`), expected((row) => row.userId === ada), "the admin's user filter: every account she spent from");
      assert.deepEqual(await listAll(admin, `/requests?orgId=${orgId}`), orgRows);
      assert.deepEqual(await listAll(admin, `/requests?orgId=${orgId}&userId=${member.userId}`), expected((row) => row.account.type === 'org' && row.userId === member.userId));
      assert.deepEqual(await listAll(admin, `/requests?keyId=${adaOrg}`), expected((row) => row.keyId === adaOrg), 'a key alone: both accounts it paid from');
      assert.deepEqual(await listAll(admin, `/requests?keyId=${bot.body.id}`), expected((row) => row.keyId === bot.body.id), "a bot's id finds its replies");
      assert.deepEqual(await listAll(admin, '/requests?keyId=key_that_never_was'), []);
      assert.deepEqual(await listAll(admin, '/requests'), expected(() => true));

      if (database === 'sqlite') {
        // Each listing's statement, as run, read through an index in newest-first order: no table scan, no sort.
        const sqlite = gw.storage.sqlite!;
        const listings = gw.queries.filter((text) => /from "request_log"/.test(text));
        assert.ok(listings.length > 10);
        for (const text of new Set(listings)) {
          const parameters = text.split('?').length - 1;
          const plan = (sqlite.prepare(`explain query plan ${text}`).all(...new Array(parameters).fill(null)) as Array<{ detail: string }>).map((step) => step.detail).join('; ');
          assert.doesNotMatch(plan, /TEMP B-TREE/, `sorted in a temporary tree: ${plan}\n${text}`);
          const unfiltered = !/"(user_id|account_id|key_id)" = /.test(text);
          if (!unfiltered) assert.match(plan, /USING (COVERING )?INDEX request_log_by_(user|org)/, `${plan}\n${text}`);
        }
      }
    });
  });
}
