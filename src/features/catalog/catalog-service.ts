import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { ChangeBus } from '../../lib/change-bus.ts';
import type { Actor } from '../audit/audit.ts';
import { ADMIN_ACTOR, type AuditService } from '../audit/audit-service.ts';
import { OPERATOR_FIELDS, type CatalogRepository, type OperatorField, type ProviderRecord } from './catalog.ts';
import { channelRecord, type ProviderPatch } from './provider-input.ts';
import { completeModel, modelSchema, type Model, type ModelInput, type ModelRecord } from './model.ts';

/**
 * The model catalog and the provider list, held in memory (the request path never reads them from the database)
 * and reloaded in every process when any process changes them.
 */
export class CatalogService {
  private models = new Map<string, Model>();
  private providers = new Map<string, ProviderRecord>();
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly repository: CatalogRepository,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
    /** Operators' model and provider changes are audited (absent in tools that only read the catalog). */
    private readonly audit?: AuditService,
  ) {
    bus.subscribe((topic) => {
      if (topic === 'catalog') this.reloadInBackground();
    });
  }

  /** A reload another process asked for; a database that cannot answer now is asked again until it does. */
  private reloadInBackground(delayMs = 500): void {
    this.reload().catch(() => {
      setTimeout(() => this.reloadInBackground(Math.min(delayMs * 2, 10_000)), delayMs).unref();
    });
  }

  async reload(): Promise<void> {
    const [records, providers] = await Promise.all([this.repository.listModels(), this.repository.listProviders()]);
    this.providers = new Map(providers.map((provider) => [provider.id, provider]));
    const now = Math.floor(this.clock.now() / 1000);
    this.models = new Map(records.map((record) => [record.id, completeModel(record, this.providers.get(record.provider)?.type, now)]));
    for (const listener of this.listeners) listener();
  }

  /** Called after every reload (the provider registry rebuilds its clients). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  get(id: string): Model | undefined {
    return this.models.get(id);
  }

  list(): Model[] {
    return [...this.models.values()];
  }

  /** Models of these kinds that a key limited to `allowed` may use (null: every model). */
  visible(allowed: readonly string[] | null, kinds: ReadonlySet<string>): Model[] {
    return this.list().filter((model) => kinds.has(model.kind) && (allowed === null || allowed.includes(model.id)));
  }

  /** One model under the rules of `visible`; undefined when it is unknown, of another kind or not allowed. */
  visibleModel(id: string, allowed: readonly string[] | null, kinds: ReadonlySet<string>): Model | undefined {
    const model = this.models.get(id);
    return model && kinds.has(model.kind) && (allowed === null || allowed.includes(model.id)) ? model : undefined;
  }

  provider(id: string): ProviderRecord | undefined {
    return this.providers.get(id);
  }

  listProviders(): ProviderRecord[] {
    return [...this.providers.values()];
  }

  /** Creates or replaces a model (admin PUT); throws the zod error for invalid input. */
  async putModel(id: string, input: Omit<ModelInput, 'id'>, actor: Actor = ADMIN_ACTOR): Promise<Model> {
    this.checkRedirect(id, input.deprecation_redirect_to);
    const before = this.models.get(id);
    const record = modelSchema.parse({ ...input, id });
    this.checkFallbacks(record);
    record.created ??= before?.created ?? Math.floor(this.clock.now() / 1000);
    await this.save(record, input);
    await this.audit?.record(actor, 'model.put', { type: 'model', id }, { before: before ?? null, after: record });
    return this.models.get(id)!;
  }

  /** Changes some fields of a model (admin PATCH); undefined when there is no such model. */
  async patchModel(id: string, changes: Partial<ModelInput>, actor: Actor = ADMIN_ACTOR): Promise<Model | undefined> {
    this.checkRedirect(id, changes.deprecation_redirect_to);
    const current = this.models.get(id);
    if (!current) return undefined;
    const { upstreamModel, family, title, created, owned_by, retiresAt: _retiresAt, ...rest } = current;
    const base: ModelInput = { ...rest, upstreamModel, family, title, created, owned_by };
    const record = modelSchema.parse({ ...base, ...changes, id });
    this.checkFallbacks(record);
    await this.save(record, changes);
    // Prices and retirement (deprecated_at, deprecation_redirect_to) are what operators change here: the trail says who and when.
    await this.audit?.record(actor, 'model.update', { type: 'model', id }, { before: pick(current, Object.keys(changes)), after: pick(record, Object.keys(changes)) });
    return this.models.get(id);
  }

  /**
   * Imports catalog entries (first start, `tollgate models import`): new ids are added, vendor fields of existing ones
   * updated. Fields the operator set through the admin API (prices, retirement, routing) are kept unless `overwrite`,
   * which also forgets that the operator set them.
   */
  async importModels(inputs: readonly ModelInput[], options: { overwrite?: boolean } = {}): Promise<number> {
    const at = this.clock.now();
    const edited = options.overwrite ? new Map<string, OperatorField[]>() : await this.repository.operatorFields();
    for (const input of inputs) {
      const record = modelSchema.parse(input);
      const current = this.models.get(record.id);
      record.created ??= current?.created ?? Math.floor(at / 1000);
      const kept = current ? (edited.get(record.id) ?? []) : [];
      for (const field of kept) Object.assign(record, { [field]: current![field] });
      await this.repository.upsertModel(modelSchema.parse(record), at, kept);
    }
    await this.bus.publish('catalog', '');
    await this.reload();
    return inputs.length;
  }

  async isEmpty(): Promise<boolean> {
    return (await this.repository.countModels()) === 0;
  }

  /** Creates or replaces a provider; its id is 1-64 lowercase letters, digits, - or _ (it names the provider in model records). */
  async putProvider(provider: ProviderRecord, actor: Actor = ADMIN_ACTOR): Promise<ProviderRecord> {
    if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(provider.id)) throw new GatewayError('invalid_request', 'id: must be 1-64 lowercase letters, digits, - or _', { param: 'id' });
    return this.saveProvider(provider, 'provider.put', actor);
  }

  /**
   * Changes some fields of a stored provider (admin PATCH, CLI). `channels` replaces the channel list, but a channel given
   * without `apiKey` keeps the key of the stored channel with the same id (a new id has none): who edits a weight never sees
   * the keys (the API shows `hasApiKey` only) and must not wipe them; `apiKey: null` removes a key, a string sets it. `baseUrl`
   * and `apiKey` change the one channel of a one-channel provider (`apiKey: null` removes the key, an absent one keeps it).
   * PUT keeps no key: it replaces everything.
   */
  async patchProvider(id: string, changes: ProviderPatch, actor: Actor = ADMIN_ACTOR): Promise<ProviderRecord> {
    const current = this.providers.get(id);
    if (!current) throw providerNotFound(id);
    const storedKey = (channelId: string): string | null => current.channels.find((channel) => channel.id === channelId)?.apiKey ?? null;
    let channels = changes.channels
      ? changes.channels.map((input) => ({ ...channelRecord(input), ...(input.apiKey === undefined ? { apiKey: storedKey(input.id) } : {}) }))
      : current.channels;
    if (changes.baseUrl !== undefined || changes.apiKey !== undefined) {
      const [only] = current.channels;
      if (current.channels.length !== 1 || !only) {
        const param = changes.baseUrl !== undefined ? 'baseUrl' : 'apiKey';
        throw new GatewayError('invalid_request', `${param}: provider '${id}' has ${current.channels.length} channels; change them with channels`, { param });
      }
      channels = [{ ...only, ...(changes.baseUrl !== undefined ? { baseUrl: changes.baseUrl } : {}), ...(changes.apiKey !== undefined ? { apiKey: changes.apiKey } : {}) }];
    }
    return this.saveProvider({ id, type: changes.type ?? current.type, channels }, 'provider.update', actor);
  }

  /**
   * Deletes a stored provider (admin API, CLI). Refused (409) while any model routes to it, judged on the stored catalog rather
   * than this process's copy: those models would stop answering. Move or delete them first.
   */
  async deleteProvider(id: string, actor: Actor = ADMIN_ACTOR): Promise<ProviderRecord> {
    const before = (await this.repository.listProviders()).find((provider) => provider.id === id);
    if (!before) throw providerNotFound(id);
    const routed = (await this.repository.listModels()).filter((model) => model.provider === id).map((model) => model.id);
    if (routed.length > 0) {
      const named = routed.slice(0, 5).join(', ') + (routed.length > 5 ? ` and ${routed.length - 5} more` : '');
      throw new GatewayError('conflict', `Provider '${id}' still serves ${routed.length} model${routed.length === 1 ? '' : 's'} (${named}): route ${routed.length === 1 ? 'it' : 'them'} to another provider or delete ${routed.length === 1 ? 'it' : 'them'} first.`, { codeA: 'provider_in_use' });
    }
    if (!(await this.repository.deleteProvider(id))) throw providerNotFound(id);
    await this.audit?.record(actor, 'provider.delete', { type: 'provider', id }, { before: providerAuditView(before), after: null });
    await this.bus.publish('catalog', '');
    await this.reload();
    return before;
  }

  /**
   * Deletes a model (admin API, CLI): requests for it then answer 404 as for any unknown model; request-log and ledger rows keep
   * its id as text. Refused (409) while another model names it as `deprecation_redirect_to`: retired clients would lose their
   * analogue. `models import` adds a built-in model again.
   */
  async deleteModel(id: string, actor: Actor = ADMIN_ACTOR): Promise<void> {
    const records = await this.repository.listModels();
    const before = records.find((model) => model.id === id);
    if (!before) throw new GatewayError('not_found', `The model '${id}' does not exist.`);
    const redirecting = records.filter((model) => model.deprecation_redirect_to === id).map((model) => model.id);
    if (redirecting.length > 0) {
      throw new GatewayError('conflict', `Model '${id}' is the analogue (deprecation_redirect_to) of ${redirecting.join(', ')}: point ${redirecting.length === 1 ? 'it' : 'them'} elsewhere first.`, { codeA: 'model_in_use' });
    }
    if (!(await this.repository.deleteModel(id))) throw new GatewayError('not_found', `The model '${id}' does not exist.`);
    await this.audit?.record(actor, 'model.delete', { type: 'model', id }, { before, after: null });
    await this.bus.publish('catalog', id);
    await this.reload();
  }

  private async saveProvider(provider: ProviderRecord, action: 'provider.put' | 'provider.update', actor: Actor): Promise<ProviderRecord> {
    const before = this.providers.get(provider.id);
    await this.repository.upsertProvider(provider, this.clock.now());
    await this.audit?.record(actor, action, { type: 'provider', id: provider.id }, { before: before ? providerAuditView(before) : null, after: providerAuditView(provider) });
    await this.bus.publish('catalog', '');
    await this.reload();
    return this.providers.get(provider.id)!;
  }

  /** A retired model redirects to another model that exists. */
  private checkRedirect(id: string, target: string | null | undefined): void {
    if (target === undefined || target === null) return;
    if (target === id) throw new GatewayError('invalid_request', 'deprecation_redirect_to: must name another model', { param: 'deprecation_redirect_to' });
    if (!this.models.get(target)) {
      throw new GatewayError('invalid_request', `deprecation_redirect_to: model '${target}' does not exist`, { param: 'deprecation_redirect_to' });
    }
  }

  /** Fallbacks name other models of the same kind, each once. */
  private checkFallbacks(record: ModelRecord): void {
    const fallbacks = record.fallbacks ?? [];
    fallbacks.forEach((target, index) => {
      const param = `fallbacks[${index}]`;
      if (target === record.id) throw new GatewayError('invalid_request', `${param}: must name another model`, { param });
      if (fallbacks.indexOf(target) !== index) throw new GatewayError('invalid_request', `${param}: '${target}' is listed twice`, { param });
      const model = this.models.get(target);
      if (!model) throw new GatewayError('invalid_request', `${param}: model '${target}' does not exist`, { param });
      if (model.kind !== record.kind) throw new GatewayError('invalid_request', `${param}: '${target}' serves ${model.kind}, not ${record.kind}`, { param });
    });
  }

  /** Stores an operator's edit; the operator fields it sent join the ones set before. */
  private async save(record: ModelRecord, sent: Partial<ModelInput>): Promise<void> {
    const before = (await this.repository.operatorFields()).get(record.id) ?? [];
    const now = OPERATOR_FIELDS.filter((field) => sent[field] !== undefined);
    await this.repository.upsertModel(record, this.clock.now(), [...new Set([...before, ...now])]);
    await this.bus.publish('catalog', record.id);
    await this.reload();
  }
}

const providerNotFound = (id: string): GatewayError => new GatewayError('not_found', `The provider '${id}' does not exist.`);

/** A provider in the audit log: never an API key, only whether one is set. */
const providerAuditView = (record: ProviderRecord) => ({
  type: record.type,
  channels: record.channels.map(({ apiKey, ...channel }) => ({ ...channel, hasApiKey: apiKey !== null })),
});

/** The named fields of a record, for an audit entry's before and after. */
function pick(record: object, fields: readonly string[]): Record<string, unknown> {
  const source = record as Record<string, unknown>;
  return Object.fromEntries(fields.filter((field) => field in source).map((field) => [field, source[field] ?? null]));
}
