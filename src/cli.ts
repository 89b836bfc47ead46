import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { createServices, type Services } from './app.ts';
import { loadConfig } from './config/config.ts';
import { AMOUNT_RULE, formatMoney, parseAmount, type Money } from './lib/money.ts';
import { rotateMasterKey } from './features/secrets/rotate-master-key.ts';
import { formatMasterKey, loadMasterKeys } from './lib/master-key.ts';
import { serve } from './main.ts';
import { ADMIN_ACTOR } from './features/audit/audit-service.ts';
import { VOUCHER_STATES, type VoucherState } from './features/vouchers/vouchers.ts';
import { listOf } from './http/routes/admin/admin-schemas.ts';
import { auditView } from './http/routes/admin/audit.ts';
import { orgView } from './http/routes/admin/orgs.ts';
import { adminUserView } from './http/routes/admin/users.ts';
import { voucherView } from './http/routes/admin/vouchers.ts';
import { DEFAULT_CATALOG, openRuntime, readCatalogFile } from './runtime.ts';
import { openStorage } from './storage/database.ts';
import { SqlSealedValuesRepository } from './storage/sealed-values-repository.ts';
import { SqlSettingsRepository } from './storage/settings-repository.ts';
import { SPEND_PERIODS, type KeyChanges, type SpendPeriod } from './features/keys/keys.ts';
import { keyDetailsView } from './http/routes/management/views.ts';
import { adminBotView } from './http/routes/admin/bots.ts';
import { providerView } from './http/routes/admin/catalog.ts';
import { deliveryView } from './http/routes/admin/deliveries.ts';
import type { Role } from './features/accounts/accounts.ts';
import { DELIVERY_STATES, type DeliveryState } from './features/tasks/task.ts';
import type { ProviderRecord } from './features/catalog/catalog.ts';
import { providerInput, providerPatchInput, providerRecord } from './features/catalog/provider-input.ts';
import { parseOrThrow } from './dialects/validation.ts';

const money = (text: string): Money => {
  const amount = parseAmount(text);
  if (amount === undefined) throw new InvalidArgumentError(`${AMOUNT_RULE}, e.g. 10.00`);
  return amount;
};

const print = (value: unknown): void => console.log(JSON.stringify(value, null, 2));

/** `none` clears a setting; commander drops a parser's null, so it travels as the word until `keyChangesOf`. */
const NONE = 'none';
const orNull = <T,>(value: T | typeof NONE | undefined): T | null | undefined => (value === NONE ? null : value);

const count = (text: string): number | typeof NONE => {
  if (text === NONE) return NONE;
  if (!/^\d+$/.test(text) || Number(text) < 1 || Number(text) > 1_000_000_000) throw new InvalidArgumentError('a whole number from 1, or none');
  return Number(text);
};

const time = (text: string): number | typeof NONE => {
  if (text === NONE) return NONE;
  const at = Date.parse(text);
  if (Number.isNaN(at)) throw new InvalidArgumentError('an ISO 8601 time such as 2026-12-31T00:00:00Z, or none');
  return at;
};

const period = (text: string): SpendPeriod => {
  const found = SPEND_PERIODS.find((candidate) => candidate === text);
  if (!found) throw new InvalidArgumentError(SPEND_PERIODS.join(', '));
  return found;
};

interface KeyUpdateOptions {
  name?: string;
  allow?: string[];
  expires?: number | typeof NONE;
  limit?: Money;
  period?: SpendPeriod;
  noLimit?: boolean;
  rpm?: number | typeof NONE;
  tpm?: number | typeof NONE;
  disable?: boolean;
  enable?: boolean;
}

/** The options of `keys update` as the keys service names them; absent ones stay as they are. */
function keyChangesOf(options: KeyUpdateOptions): KeyChanges {
  if (options.disable && options.enable) throw new Error('give at most one of --disable and --enable');
  if (options.limit !== undefined && options.noLimit) throw new Error('give at most one of --limit and --no-limit');
  const changes: KeyChanges = {};
  if (options.name !== undefined) changes.name = options.name;
  if (options.allow !== undefined) changes.allowedModels = options.allow.length === 1 && options.allow[0] === 'all' ? null : options.allow;
  if (options.expires !== undefined) changes.expiresAt = orNull(options.expires) ?? null;
  if (options.limit !== undefined) changes.limit = { amount: options.limit, period: options.period ?? 'month' };
  if (options.noLimit) changes.limit = null;
  if (options.rpm !== undefined) changes.rateLimit = orNull(options.rpm) ?? null;
  if (options.tpm !== undefined) changes.tpm = orNull(options.tpm) ?? null;
  if (options.disable) changes.disabled = true;
  if (options.enable) changes.disabled = false;
  return changes;
}

const ROLES = ['owner', 'admin', 'member'] as const satisfies readonly Role[];
const role = (text: string): Role => {
  const found = ROLES.find((candidate) => candidate === text);
  if (!found) throw new InvalidArgumentError(ROLES.join(', '));
  return found;
};

const providerType = (text: string): ProviderRecord['type'] => {
  if (text !== 'openai' && text !== 'anthropic') throw new InvalidArgumentError('openai or anthropic');
  return text;
};

/** `--channels`: JSON text, or `@path` to a JSON file (keeps vendor keys out of the shell history). */
const channelsOption = (text: string): unknown => {
  const source = text.startsWith('@') ? readFileSync(text.slice(1), 'utf8') : text;
  try {
    return JSON.parse(source) as unknown;
  } catch {
    throw new InvalidArgumentError('JSON: an array of channels');
  }
};

const baseUrl = (text: string): string => {
  if (!URL.canParse(text)) throw new InvalidArgumentError('a URL such as https://api.openai.com/v1');
  return text;
};

const positiveInteger = (text: string): number => {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError('must be a positive integer');
  return value;
};

/** `--query`, `--limit` and `--cursor` of every list command, as the admin API takes them. */
const listOptions = (command: Command): Command =>
  command.option('--query <text>', 'match name, email or id').option('--limit <n>', 'rows per page (1 to 100)', positiveInteger, 20).option('--cursor <cursor>', 'next_cursor of the previous page');
const pageOf = (options: { query?: string; limit: number; cursor?: string }) => {
  if (options.limit > 100) throw new InvalidArgumentError('--limit: at most 100');
  return { limit: options.limit, ...(options.query ? { query: options.query } : {}), ...(options.cursor ? { cursor: options.cursor } : {}) };
};

/** Runs one operation against the configured database with the same services the gateway uses. */
async function withServices(action: (services: Services) => Promise<void>): Promise<void> {
  const config = loadConfig();
  const runtime = await openRuntime(config, { useSimulator: false });
  const services = createServices(runtime.dependencies);
  try {
    await services.catalog.reload();
    await action(services);
  } finally {
    await services.book.close();
    await services.http.close();
    await runtime.close();
  }
}

const program = new Command('tollgate').description('Tollgate, a self-hosted gateway to hosted AI models').showHelpAfterError();

program.command('serve').description('start the gateway (HOST, PORT, DATABASE_URL, … from the environment)').action(serve);

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const storage = await openStorage(loadConfig().databaseUrl);
    await storage.close();
    console.log('migrations applied');
  });

const users = program.command('users').description('users');
users
  .command('create')
  .requiredOption('--name <name>', 'display name')
  .option('--balance <amount>', 'initial balance', money)
  .action((options: { name: string; balance?: Money }) =>
    withServices(async (services) => {
      const user = await services.accounts.createUser(options.name, options.balance ?? 0n);
      print({ id: user.id, name: user.name, balance: formatMoney(user.balance) });
    }),
  );

listOptions(users.command('list').description('users, newest first')).action((options: { query?: string; limit: number; cursor?: string }) =>
  withServices(async (services) => {
    const page = await services.directory.listUsers(pageOf(options));
    print(listOf(page.users.map(adminUserView), page.nextCursor));
  }),
);
users
  .command('show <userId>')
  .action((userId: string) => withServices(async (services) => print(adminUserView(await services.directory.user(userId)))));
users
  .command('update <userId>')
  .option('--name <name>', 'display name')
  .option('--email <email>', 'sign-in email')
  .option('--password <password>', 'new password (signs the user out everywhere)')
  .option('--operator <yes|no>', 'may open the operator pages', (text: string) => {
    if (text !== 'yes' && text !== 'no') throw new InvalidArgumentError('yes or no');
    return text === 'yes';
  })
  .action((userId: string, options: { name?: string; email?: string; password?: string; operator?: boolean }) =>
    withServices(async (services) => print(adminUserView(await services.directory.updateUser(userId, options, ADMIN_ACTOR)))),
  );

users
  .command('reset-link <userId>')
  .description('a single-use password reset link for the user, valid 1 hour (no mail needed; audited)')
  .action((userId: string) =>
    withServices(async (services) => {
      const link = await services.passwordReset.issueLink(userId, ADMIN_ACTOR);
      print({ url: link.url, expiresAt: new Date(link.expiresAt).toISOString() });
    }),
  );

const orgs = program.command('orgs').description('organisations');
listOptions(orgs.command('list').description('organisations, newest first')).action((options: { query?: string; limit: number; cursor?: string }) =>
  withServices(async (services) => {
    const page = await services.directory.listOrgs(pageOf(options));
    print(listOf(page.orgs.map(orgView), page.nextCursor));
  }),
);
orgs
  .command('show <orgId>')
  .action((orgId: string) =>
    withServices(async (services) => {
      const org = await services.directory.org(orgId);
      print({ ...orgView(org), members: org.members });
    }),
  );
orgs
  .command('update <orgId>')
  .option('--name <name>', 'display name')
  .option('--prompt-caching <on|off>', 'prompt caching for business keys', (text: string) => {
    if (text !== 'on' && text !== 'off') throw new InvalidArgumentError('on or off');
    return text === 'on';
  })
  .action((orgId: string, options: { name?: string; promptCaching?: boolean }) =>
    withServices(async (services) => print(orgView(await services.accounts.updateOrg(orgId, options, ADMIN_ACTOR)))),
  );
orgs
  .command('create')
  .requiredOption('--name <name>', 'display name')
  .requiredOption('--owner <userId>', 'owner user id')
  .option('--balance <amount>', 'initial balance', money)
  .option('--prompt-caching', 'enable prompt caching for business keys', false)
  .action((options: { name: string; owner: string; balance?: Money; promptCaching: boolean }) =>
    withServices(async (services) => {
      const org = await services.accounts.createOrg({ name: options.name, ownerId: options.owner, balance: options.balance ?? 0n, promptCaching: options.promptCaching });
      print({ id: org.id, name: org.name, balance: formatMoney(org.balance), promptCaching: org.promptCaching });
    }),
  );

const members = orgs.command('members').description("an organisation's members");
members
  .command('list <orgId>')
  .action((orgId: string) => withServices(async (services) => print(listOf(await services.directory.members(orgId), undefined))));
members
  .command('add <orgId> <userId>')
  .description("add a member, or set an existing member's role")
  .requiredOption('--role <role>', ROLES.join(', '), role)
  .action((orgId: string, userId: string, options: { role: Role }) =>
    withServices(async (services) => {
      await services.accounts.addMember(orgId, userId, options.role, ADMIN_ACTOR);
      print({ ok: true });
    }),
  );
members
  .command('update <orgId> <userId>')
  .description("change a member's role; the organisation keeps its last owner")
  .requiredOption('--role <role>', ROLES.join(', '), role)
  .action((orgId: string, userId: string, options: { role: Role }) =>
    withServices(async (services) => print(await services.orgs.operatorChangeRole(ADMIN_ACTOR, orgId, userId, options.role))),
  );
members
  .command('remove <orgId> <userId>')
  .description("end a membership (the member's keys and bots for the organisation stop); the last owner stays")
  .action((orgId: string, userId: string) =>
    withServices(async (services) => print({ ...(await services.orgs.operatorRemoveMember(ADMIN_ACTOR, orgId, userId)), deleted: true })),
  );

const keys = program.command('keys').description('API keys');
keys
  .command('create')
  .requiredOption('--user <userId>', 'owner user id')
  .option('--org <orgId>', 'bind to an organisation (a business key)')
  .option('--name <name>', 'label')
  .option('--allow <models>', 'comma-separated allowed model ids', (text: string) => text.split(',').map((id) => id.trim()).filter(Boolean))
  .action((options: { user: string; org?: string; name?: string; allow?: string[] }) =>
    withServices(async (services) => {
      const { key, text } = await services.keys.create({ userId: options.user, orgId: options.org ?? null, name: options.name ?? null, allowedModels: options.allow ?? null });
      print({ id: key.id, key: text, userId: key.userId, orgId: key.orgId, allowedModels: key.allowedModels });
    }),
  );
keys
  .command('list')
  .option('--user <userId>', "only this user's keys")
  .option('--org <orgId>', "only this organisation's keys")
  .option('--query <text>', 'part of the name, id or start')
  .option('--limit <n>', 'keys per page (1-100)', (text: string) => Math.min(100, Math.max(1, Number(text) || 20)), 20)
  .option('--cursor <cursor>', 'the next page (next_cursor of the previous one)')
  .option('--revoked', 'include revoked keys', false)
  .action((options: { user?: string; org?: string; query?: string; limit: number; cursor?: string; revoked: boolean }) =>
    withServices(async (services) => {
      const page = await services.keys.list({
        limit: options.limit,
        includeRevoked: options.revoked,
        ...(options.user ? { userId: options.user } : {}),
        ...(options.org ? { orgId: options.org } : {}),
        ...(options.query ? { query: options.query } : {}),
        ...(options.cursor ? { cursor: options.cursor } : {}),
      });
      const data = await Promise.all(page.keys.map(async (key) => keyDetailsView(await services.keys.details(key))));
      print({ object: 'list', data, next_cursor: page.nextCursor ?? null });
    }),
  );
keys
  .command('show <keyId>')
  .action((keyId: string) =>
    withServices(async (services) => {
      const key = await services.keys.get(keyId);
      if (!key) throw new Error(`no key ${keyId}`);
      print(keyDetailsView(await services.keys.details(key)));
    }),
  );
keys
  .command('update <keyId>')
  .option('--name <name>', 'label')
  .option('--allow <models>', "comma-separated allowed model ids, or 'all'", (text: string) => text.split(',').map((id) => id.trim()).filter(Boolean))
  .option('--expires <time>', "ISO 8601 time the key stops working, or 'none'", time)
  .option('--limit <amount>', 'most the key may spend per period', money)
  .option('--period <period>', `the limit's UTC period: ${SPEND_PERIODS.join(', ')} (default month)`, period)
  .option('--no-limit', 'remove the spend limit')
  .option('--rpm <n>', "requests per minute, or 'none'", count)
  .option('--tpm <n>', "tokens per minute, or 'none'", count)
  .option('--disable', 'refuse the key until enabled')
  .option('--enable', 'accept the key again')
  .action((keyId: string, options: Omit<KeyUpdateOptions, 'limit'> & { limit?: Money | false }) =>
    withServices(async (services) => {
      // commander turns `--no-limit` into `limit: false`.
      const { limit, ...rest } = options;
      const changes = keyChangesOf({ ...rest, ...(limit === false ? { noLimit: true } : limit !== undefined ? { limit } : {}) });
      const key = await services.keys.update(keyId, changes);
      if (!key) throw new Error(`no live key ${keyId}`);
      print(keyDetailsView(await services.keys.details(key)));
    }),
  );
keys
  .command('revoke <keyId>')
  .action((keyId: string) =>
    withServices(async (services) => {
      if (!(await services.keys.revoke(keyId))) throw new Error(`no live key ${keyId}`);
      print({ ok: true });
    }),
  );

const bots = program.command('bots').description('chat-bot integrations');
bots
  .command('create')
  .requiredOption('--user <userId>', 'the user the bot acts for')
  .requiredOption('--assistant <assistantId>', 'the assistant that answers')
  .option('--org <orgId>', 'charge replies to this organisation')
  .option('--webhook <url>', "the chat service's webhook for replies")
  .option('--name <name>', 'label')
  .action((options: { user: string; assistant: string; org?: string; webhook?: string; name?: string }) =>
    withServices(async (services) => {
      const { bot, token } = await services.botIntegrations.operatorCreate(ADMIN_ACTOR, { userId: options.user, orgId: options.org ?? null, assistantId: options.assistant, webhookUrl: options.webhook ?? null, name: options.name ?? null });
      print({ ...adminBotView(bot), token });
    }),
  );
listOptions(bots.command('list').description('live bots, newest first (never their tokens)'))
  .option('--user <userId>', "only this user's bots")
  .option('--org <orgId>', "only this organisation's bots")
  .action((options: { query?: string; limit: number; cursor?: string; user?: string; org?: string }) =>
    withServices(async (services) => {
      const page = await services.botIntegrations.operatorList({ ...pageOf(options), userId: options.user, orgId: options.org });
      print(listOf(page.bots.map(adminBotView), page.nextCursor));
    }),
  );
bots
  .command('show <botId>')
  .action((botId: string) => withServices(async (services) => print(adminBotView(await services.botIntegrations.operatorGet(botId)))));
bots
  .command('update <botId>')
  .description("change a bot under its owner's rules (the assistant must be one the bot's user may use; the URL passes the guard)")
  .option('--name <name>', 'label')
  .option('--assistant <assistantId>', 'the assistant that answers')
  .option('--webhook <url>', "the chat service's webhook for replies, or 'none'")
  .action((botId: string, options: { name?: string; assistant?: string; webhook?: string }) =>
    withServices(async (services) => {
      if (options.name !== undefined && options.name.trim() === '') throw new InvalidArgumentError('--name: must not be empty');
      const bot = await services.botIntegrations.operatorUpdate(ADMIN_ACTOR, botId, {
        ...(options.name !== undefined ? { name: options.name.trim() } : {}),
        ...(options.assistant !== undefined ? { assistantId: options.assistant } : {}),
        ...(options.webhook !== undefined ? { webhookUrl: orNull(options.webhook) ?? null } : {}),
      });
      print(adminBotView(bot));
    }),
  );
bots
  .command('delete <botId>')
  .description('delete a bot: its token stops working at once')
  .action((botId: string) => withServices(async (services) => print({ ...adminBotView(await services.botIntegrations.operatorDelete(ADMIN_ACTOR, botId)), deleted: true })));

const providers = program.command('providers').description('upstream providers (their API keys are never shown)');
providers.command('list').action(() => withServices(async (services) => print(listOf(services.catalog.listProviders().map((provider) => providerView(provider)), undefined))));
providers
  .command('show <providerId>')
  .action((providerId: string) =>
    withServices(async (services) => {
      const provider = services.catalog.provider(providerId);
      if (!provider) throw new Error(`The provider '${providerId}' does not exist.`);
      print(providerView(provider));
    }),
  );
providers
  .command('put <providerId>')
  .description('create or replace a provider: one channel (--base-url, --api-key) or several (--channels)')
  .requiredOption('--type <type>', 'openai or anthropic', providerType)
  .option('--base-url <url>', 'the API base URL, e.g. https://api.openai.com/v1', baseUrl)
  .option('--api-key <key>', 'the API key (sealed at rest)')
  .option('--channels <json>', 'the channels as JSON, or @file: [{"id","baseUrl","apiKey","weight","priority","models"}]', channelsOption)
  .action((providerId: string, options: { type: ProviderRecord['type']; baseUrl?: string; apiKey?: string; channels?: unknown }) =>
    withServices(async (services) => {
      if ((options.channels === undefined) === (options.baseUrl === undefined)) throw new InvalidArgumentError('give either --base-url (one channel) or --channels');
      const body = options.channels !== undefined ? { type: options.type, channels: options.channels } : { type: options.type, baseUrl: options.baseUrl, apiKey: options.apiKey ?? null };
      print(providerView(await services.catalog.putProvider(providerRecord(providerId, parseOrThrow(providerInput, body)), ADMIN_ACTOR)));
    }),
  );
providers
  .command('update <providerId>')
  .option('--type <type>', 'openai or anthropic', providerType)
  .option('--base-url <url>', 'the API base URL (a one-channel provider)', baseUrl)
  .option('--api-key <key>', "the API key, or 'none' to remove it (a one-channel provider)")
  .option('--channels <json>', 'replace the channels: JSON, or @file; a channel without "apiKey" keeps the stored key of its id, "apiKey": null removes it', channelsOption)
  .action((providerId: string, options: { type?: ProviderRecord['type']; baseUrl?: string; apiKey?: string; channels?: unknown }) =>
    withServices(async (services) => {
      const changes = {
        ...(options.type !== undefined ? { type: options.type } : {}),
        ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
        ...(options.apiKey !== undefined ? { apiKey: orNull(options.apiKey) ?? null } : {}),
        ...(options.channels !== undefined ? { channels: options.channels } : {}),
      };
      if (Object.keys(changes).length === 0) throw new InvalidArgumentError('give at least one of --type, --base-url, --api-key and --channels');
      print(providerView(await services.catalog.patchProvider(providerId, parseOrThrow(providerPatchInput, changes), ADMIN_ACTOR)));
    }),
  );
providers
  .command('delete <providerId>')
  .description('delete a provider; refused while any model routes to it')
  .action((providerId: string) => withServices(async (services) => print({ ...providerView(await services.catalog.deleteProvider(providerId, ADMIN_ACTOR)), deleted: true })));

const deliveries = program.command('deliveries').description('task webhook deliveries');
deliveries
  .command('list')
  .description("a task's attempts (--task), or each task's latest attempt, newest first, with its state")
  .option('--task <taskId>', 'the task')
  .option('--state <state>', `one of ${DELIVERY_STATES.join(', ')} (without --task)`, (text: string) => {
    const state = DELIVERY_STATES.find((candidate) => candidate === text);
    if (!state) throw new InvalidArgumentError(`one of ${DELIVERY_STATES.join(', ')}`);
    return state;
  })
  .option('--limit <n>', 'rows per page (1 to 100)', positiveInteger, 20)
  .option('--cursor <cursor>', 'next_cursor of the previous page')
  .action((options: { task?: string; state?: DeliveryState; limit: number; cursor?: string }) =>
    withServices(async (services) => {
      if (options.task !== undefined) return print(listOf((await services.deliveries.list(options.task)).map(deliveryView), undefined));
      const page = await services.deliveries.latest({ ...pageOf(options), ...(options.state ? { state: options.state } : {}) });
      print(listOf(page.deliveries.map((delivery) => ({ ...deliveryView(delivery), state: delivery.state })), page.nextCursor));
    }),
  );
deliveries
  .command('retry <deliveryId>')
  .description('deliver the task of a delivery that failed for good again, now (then the usual retries)')
  .action((deliveryId: string) =>
    withServices(async (services) => {
      const { delivery, queuedAt } = await services.deliveries.retry(ADMIN_ACTOR, deliveryId);
      print({ id: delivery.id, object: 'delivery.retry', taskId: delivery.taskId, queued: true, runAt: new Date(queuedAt).toISOString() });
    }),
  );

program
  .command('balance')
  .description('balances')
  .command('credit')
  .option('--user <userId>')
  .option('--org <orgId>')
  .requiredOption('--amount <amount>', 'amount to add (negative debits)', money)
  .action((options: { user?: string; org?: string; amount: Money }) =>
    withServices(async (services) => {
      if (!options.user === !options.org) throw new Error('give exactly one of --user and --org');
      const account = options.user ? { type: 'user' as const, id: options.user } : { type: 'org' as const, id: options.org! };
      print({ balance: formatMoney(await services.accounts.adjust(account, options.amount, 'cli credit')) });
    }),
  );

const vouchers = program.command('vouchers').description('prepaid voucher codes');
vouchers
  .command('create')
  .requiredOption('--amount <amount>', 'what each code credits', money)
  .option('--count <n>', 'how many codes (at most 1000)', positiveInteger, 1)
  .option('--expires <time>', 'ISO 8601 expiry, e.g. 2027-01-01T00:00:00Z')
  .option('--note <text>', 'shown in lists and in the ledger entry of each redemption')
  .action((options: { amount: Money; count: number; expires?: string; note?: string }) =>
    withServices(async (services) => {
      const expiresAt = options.expires === undefined ? null : Date.parse(options.expires);
      if (Number.isNaN(expiresAt)) throw new InvalidArgumentError('--expires: an ISO 8601 time');
      const made = await services.vouchers.create({ amount: options.amount, count: options.count, expiresAt, note: options.note ?? null }, ADMIN_ACTOR);
      const now = services.clock.now();
      print({ codes: made.map(({ code }) => code), data: made.map(({ voucher, code }) => ({ ...voucherView(voucher, now), code })) });
    }),
  );
listOptions(vouchers.command('list').description('vouchers, newest first, without their codes'))
  .option('--state <state>', `one of ${VOUCHER_STATES.join(', ')}`, (text: string) => {
    const state = VOUCHER_STATES.find((candidate) => candidate === text);
    if (!state) throw new InvalidArgumentError(`one of ${VOUCHER_STATES.join(', ')}`);
    return state;
  })
  .action((options: { query?: string; limit: number; cursor?: string; state?: VoucherState }) =>
    withServices(async (services) => {
      const page = await services.vouchers.list({ ...pageOf(options), ...(options.state ? { state: options.state } : {}) });
      const now = services.clock.now();
      print(listOf(page.vouchers.map((voucher) => voucherView(voucher, now)), page.nextCursor));
    }),
  );

program
  .command('audit')
  .description('the audit log')
  .command('list')
  .option('--actor <id>', 'actor id')
  .option('--action <action>', 'e.g. balance.credit, voucher.create')
  .option('--target <id>', 'target id')
  .option('--org <orgId>', 'entries about this organisation')
  .option('--limit <n>', 'rows per page (1 to 100)', positiveInteger, 20)
  .option('--cursor <cursor>', 'next_cursor of the previous page')
  .action((options: { actor?: string; action?: string; target?: string; org?: string; limit: number; cursor?: string }) =>
    withServices(async (services) => {
      if (options.limit > 100) throw new InvalidArgumentError('--limit: at most 100');
      const page = await services.audit.list({
        limit: options.limit,
        ...(options.actor ? { actorId: options.actor } : {}),
        ...(options.action ? { action: options.action } : {}),
        ...(options.target ? { targetId: options.target } : {}),
        ...(options.org ? { orgId: options.org } : {}),
        ...(options.cursor ? { cursor: options.cursor } : {}),
      });
      print(listOf(page.entries.map(auditView), page.nextCursor));
    }),
  );

const models = program.command('models').description('the model catalog');
models
  .command('import [file]')
  .description(`import models from a JSON catalog (default ${DEFAULT_CATALOG}); prices, retirement and routing set by the operator are kept`)
  .option('--overwrite', "replace the operator's prices, retirement and routing with the file's too", false)
  .action((file: string | undefined, options: { overwrite: boolean }) =>
    withServices(async (services) => {
      print({ imported: await services.catalog.importModels(readCatalogFile(file ?? DEFAULT_CATALOG), { overwrite: options.overwrite }) });
    }),
  );

models
  .command('delete <modelId>')
  .description('delete a model (requests for it answer 404); refused while another model redirects to it')
  .action((modelId: string) =>
    withServices(async (services) => {
      await services.catalog.deleteModel(modelId, ADMIN_ACTOR);
      print({ id: modelId, object: 'model', deleted: true });
    }),
  );

program
  .command('secrets')
  .description('secrets at rest')
  .command('rotate')
  .description('make a new master key current, keep the old one as previous, and reseal every stored secret under the new key')
  .option('--key <key>', 'the new key (32 bytes as base64 or 64 hex characters); default: a random one')
  .action(async (options: { key?: string }) => {
    const config = loadConfig();
    const storage = await openStorage(config.databaseUrl);
    try {
      const keys = loadMasterKeys({ dataDir: config.dataDir, secretKey: config.secretKey, previousKey: config.secretKeyPrevious });
      const legacySecret = config.hashSecret ?? (await new SqlSettingsRepository(storage.db).get('hash_secret'));
      const result = await rotateMasterKey({ repository: new SqlSealedValuesRepository(storage.db), dataDir: config.dataDir, keys, nextKeyText: options.key, legacySecret });
      print({ previousKeyId: result.previousKeyId, keyId: result.keyId, resealed: result.resealed, keySource: keys.source });
      if (keys.source === 'environment') {
        const next = options.key ? '<the key given with --key>' : formatMasterKey(result.next);
        console.log(`the master key comes from the environment: set TOLLGATE_SECRET_KEY=${next} and TOLLGATE_SECRET_KEY_PREVIOUS to the old key, then restart the gateways`);
      } else {
        console.log(`new key in ${config.dataDir}/secret.key, the old one in secret.key.previous: restart the gateways`);
      }
    } finally {
      await storage.close();
    }
  });

program
  .command('simulate')
  .description('run the vendor simulator (OpenAI and Anthropic formats)')
  .option('--host <host>', 'address', '127.0.0.1')
  .option('--port <port>', 'port', (text: string) => Number.parseInt(text, 10), 9090)
  .option('--latency-ms <ms>', 'delay before each response head', (text: string) => Number.parseInt(text, 10), 0)
  .option('--chunk-delay-ms <ms>', 'delay between stream chunks', (text: string) => Number.parseInt(text, 10), 0)
  .action(async (options: { host: string; port: number; latencyMs: number; chunkDelayMs: number }) => {
    const { startSimulator } = await import('../simulator/server.ts');
    const simulator = await startSimulator({ host: options.host, port: options.port, latencyMs: options.latencyMs, chunkDelayMs: options.chunkDelayMs });
    console.log(`simulator listening on ${simulator.url}`);
    const stop = (): void => void simulator.close().then(() => process.exit(0));
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
