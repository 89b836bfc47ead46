import type { Logger } from 'pino';
import type { z } from 'zod';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { parseMoney } from '../../lib/money.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { payerOf, type Caller } from '../inference/model-call.ts';
import type { Assistant, AssistantsRepository, createAssistantSchema, updateAssistantSchema } from './assistant.ts';
import { cosine, type Embedder } from './embedder.ts';

export const assistantNotFound = (): GatewayError => new GatewayError('not_found', 'Assistant not found');

/** A catalog query matches semantically from this cosine similarity up. */
const SEMANTIC_THRESHOLD = 0.5;

type CreateInput = z.output<typeof createAssistantSchema>;
type UpdateInput = z.output<typeof updateAssistantSchema>;

/**
 * Who looks at assistants: a key's user and organisation, a signed-in user (no organisation: the console acts on the personal
 * account), or nobody (the public storefront: `userId` null). `requestId` labels the embedding call of a semantic search.
 */
export interface Viewer {
  userId: string | null;
  orgId: string | null;
  requestId: string;
}

export const viewerOf = (caller: Caller): Viewer => ({ userId: caller.key.userId, orgId: caller.key.orgId, requestId: caller.requestId });

/** An assistant's page (`/a/:mention`): the assistant, its owner as the catalog names them, whether the viewer installed it. */
export interface AssistantPage {
  assistant: Assistant;
  owner: { id: string; name: string };
  installed: boolean;
  /** Whether the viewer liked it (false when signed out). */
  liked: boolean;
}

/** Saved assistant configurations: create, update (SPEC 4.4 semantics), the owner's list, the catalog, likes and installs. */
export class AssistantsService {
  constructor(
    private readonly repository: AssistantsRepository,
    private readonly accounts: AccountsService,
    private readonly catalog: CatalogService,
    private readonly embedder: Embedder,
    private readonly book: BalanceBook,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly knowledge: { owned(ownerId: string, id: string): Promise<unknown> },
  ) {}

  /** A linked knowledge base must be one of the owner's. */
  private async checkDatabase(ownerId: string, database: { id: string } | null | undefined): Promise<void> {
    if (database && !(await this.knowledge.owned(ownerId, database.id))) throw invalidParam('database.id', `'${database.id}' is not one of your knowledge bases`);
  }

  private checkModel(modelId: string): void {
    const model = this.catalog.get(modelId);
    if (!model || model.kind !== 'chat') throw invalidParam('modelId', `'${modelId}' is not a text model of /v1/models`);
  }

  private async checkMention(mention: string, exceptId?: string): Promise<void> {
    const taken = await this.repository.byMention(mention);
    if (taken && taken.id !== exceptId) throw new GatewayError('conflict', `mention: '${mention}' is already taken`, { param: 'mention' });
  }

  private async checkOrg(caller: Caller, orgId: string | null): Promise<void> {
    if (orgId === null) return;
    if (!(await this.accounts.getRole(orgId, caller.key.userId))) throw invalidParam('access.orgId', 'must be an organization you belong to');
  }

  /** Title, subtitle and description are embedded apart: a query close to any one of them finds the assistant. */
  private async embedding(assistant: Pick<Assistant, 'title' | 'subtitle' | 'description'>, requestId: string): Promise<number[][] | null> {
    const texts = [assistant.title, assistant.subtitle, assistant.description].filter((text) => text.trim().length > 0);
    try {
      const result = await this.embedder.embed(texts, requestId);
      return result?.vectors ?? null;
    } catch (error) {
      // Search falls back to title and code for this assistant; saving it must not fail for that.
      this.logger.warn({ err: error }, 'assistant embedding failed');
      return null;
    }
  }

  async create(caller: Caller, input: CreateInput): Promise<Assistant> {
    this.checkModel(input.modelId);
    await this.checkDatabase(caller.key.userId, input.database);
    const mention = input.mention ?? `ai${Math.floor(1_000_000 + Math.random() * 8_999_999)}`;
    await this.checkMention(mention);
    const access = {
      isPrivate: input.access?.isPrivate ?? true,
      isFree: input.access?.isFree ?? true,
      installPrice: input.access?.installPrice ?? '0',
      hideSettings: input.access?.hideSettings ?? false,
      orgId: input.access?.orgId !== undefined ? input.access.orgId : caller.key.orgId,
    };
    await this.checkOrg(caller, access.orgId);
    const now = this.clock.now();
    const base = { title: input.title, subtitle: input.subtitle ?? '', description: input.description ?? '' };
    const assistant: Assistant = {
      id: newId('assistant'),
      ownerId: caller.key.userId,
      mention,
      ...base,
      picture: input.picture ?? '',
      instruction: input.instruction ?? '',
      modelId: input.modelId,
      temperature: String(input.temperature ?? 0.7),
      sqlStore: input.sqlStore ?? false,
      access,
      database: input.database ?? null,
      mcp: input.mcp ?? [],
      apiFunctions: input.apiFunctions ?? [],
      likes: 0,
      embedding: await this.embedding(base, caller.requestId),
      createdAt: now,
      updatedAt: now,
    };
    await this.repository.insert(assistant);
    return assistant;
  }

  /** Only sent fields change; `access` is merged per field; `database`, `mcp`, `apiFunctions` are replaced whole. */
  async update(caller: Caller, input: UpdateInput): Promise<Assistant> {
    const current = await this.repository.get(input.id);
    if (!current || !(await this.mayEdit(caller, current))) throw assistantNotFound();
    if (input.modelId !== undefined) this.checkModel(input.modelId);
    await this.checkDatabase(current.ownerId, input.database);
    if (input.mention !== undefined) await this.checkMention(input.mention, current.id);
    const access = { ...current.access, ...Object.fromEntries(Object.entries(input.access ?? {}).filter(([, value]) => value !== undefined)) };
    if (input.access?.orgId !== undefined) await this.checkOrg(caller, access.orgId);
    const { id: _id, access: _access, temperature, ...fields } = input;
    const next: Assistant = {
      ...current,
      ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
      access,
      ...(temperature !== undefined ? { temperature: String(temperature) } : {}),
      updatedAt: Math.max(this.clock.now(), current.updatedAt),
    };
    const describedChanged = next.title !== current.title || next.subtitle !== current.subtitle || next.description !== current.description;
    if (describedChanged || current.embedding === null) next.embedding = await this.embedding(next, caller.requestId);
    await this.repository.update(next);
    return next;
  }

  /** The owner, or an owner or admin of the assistant's organisation. */
  private async mayEdit(caller: Caller, assistant: Assistant): Promise<boolean> {
    if (assistant.ownerId === caller.key.userId) return true;
    if (!assistant.access.orgId) return false;
    const role = await this.accounts.getRole(assistant.access.orgId, caller.key.userId);
    return role === 'owner' || role === 'admin';
  }

  /** Whether the viewer may chat with it or see it: its owner, anyone when public, the organisation's members when private. */
  async maySee(viewer: Pick<Viewer, 'userId' | 'orgId'>, assistant: Assistant): Promise<boolean> {
    if (!assistant.access.isPrivate || (viewer.userId !== null && assistant.ownerId === viewer.userId)) return true;
    if (!assistant.access.orgId || viewer.userId === null) return false;
    return viewer.orgId === assistant.access.orgId || (await this.accounts.getRole(assistant.access.orgId, viewer.userId)) !== undefined;
  }

  list(caller: Caller, query: string, limit: number, offset: number): Promise<{ total: number; items: Assistant[] }> {
    return this.repository.listByOwner(caller.key.userId, query, limit, offset);
  }

  /** The assistant behind a chat code, if the caller may use it. */
  async forChat(caller: Caller, code: string): Promise<Assistant> {
    const assistant = await this.repository.byMention(code);
    if (!assistant || !(await this.maySee(viewerOf(caller), assistant))) throw assistantNotFound();
    return assistant;
  }

  async visible(caller: Caller, id: string): Promise<Assistant> {
    const assistant = await this.repository.get(id);
    if (!assistant || !(await this.maySee(viewerOf(caller), assistant))) throw assistantNotFound();
    return assistant;
  }

  /** An assistant the caller may change (its settings, instruction and functions included); anything else is 404. */
  async editable(caller: Caller, id: string): Promise<Assistant> {
    const assistant = await this.repository.get(id);
    if (!assistant || !(await this.mayEdit(caller, assistant))) throw assistantNotFound();
    return assistant;
  }

  /** Deleted with its likes, installs and chat memory, by whoever may edit it; its code is free again at once. */
  async delete(caller: Caller, id: string): Promise<Assistant> {
    const assistant = await this.editable(caller, id);
    if (!(await this.repository.delete(assistant.id))) throw assistantNotFound();
    return assistant;
  }

  /** The page of an assistant by its code (SPEC 2.6: the mention is its address), for anyone who may see it. */
  async page(viewer: Viewer, mention: string): Promise<AssistantPage> {
    const assistant = await this.repository.byMention(mention);
    if (!assistant || !(await this.maySee(viewer, assistant))) throw assistantNotFound();
    const installed = viewer.userId === null ? new Set<string>() : await this.repository.installedBy(viewer.userId, [assistant.id]);
    const liked = viewer.userId === null ? new Set<string>() : await this.repository.likedBy(viewer.userId, [assistant.id]);
    const owner = { id: assistant.ownerId, name: (await this.accounts.getUser(assistant.ownerId))?.name ?? '' };
    return { assistant, owner, installed: installed.has(assistant.id), liked: liked.has(assistant.id) };
  }

  /**
   * SPEC 4.6: public assistants and the private ones of the viewer's organisations; `@code` is a strict code search. A
   * signed-out viewer (the storefront) finds the public ones only.
   */
  async search(viewer: Viewer, input: { query: string; sortBy: 'popular' | 'newest'; limit: number; offset: number }): Promise<{ total: number; items: Assistant[]; installed: Set<string>; owners: Map<string, string> }> {
    const orgIds = new Set(viewer.userId === null ? [] : (await this.accounts.membershipsOf(viewer.userId)).map((membership) => membership.orgId));
    if (viewer.orgId) orgIds.add(viewer.orgId);
    const query = input.query.trim();
    const strict = query.startsWith('@');
    let found = await this.repository.catalog({ orgIds: [...orgIds], ...(strict ? { mention: query.slice(1) } : {}) });
    if (query && !strict) found = await this.match(found, query, viewer.requestId);
    found.sort((a, b) => (input.sortBy === 'popular' ? b.likes - a.likes : 0) || b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const items = found.slice(input.offset, input.offset + input.limit);
    const installed = viewer.userId === null ? new Set<string>() : await this.repository.installedBy(viewer.userId, items.map((item) => item.id));
    const owners = new Map<string, string>();
    for (const ownerId of new Set(items.map((item) => item.ownerId))) owners.set(ownerId, (await this.accounts.getUser(ownerId))?.name ?? '');
    return { total: found.length, items, installed, owners };
  }

  /** Title or code containing the query, extended by assistants whose description is semantically close. */
  private async match(candidates: Assistant[], query: string, requestId: string): Promise<Assistant[]> {
    const needle = query.toLowerCase();
    const lexical = (assistant: Assistant): boolean => assistant.title.toLowerCase().includes(needle) || assistant.mention.toLowerCase().includes(needle);
    let vector: number[] | undefined;
    try {
      vector = (await this.embedder.embed([query], requestId))?.vectors[0];
    } catch (error) {
      this.logger.warn({ err: error }, 'catalog query embedding failed; lexical search only');
    }
    const semantic = (assistant: Assistant): boolean =>
      vector !== undefined && (assistant.embedding ?? []).some((embedding) => cosine(vector, embedding) >= SEMANTIC_THRESHOLD);
    return candidates.filter((assistant) => lexical(assistant) || semantic(assistant));
  }

  async like(caller: Caller, id: string): Promise<Assistant> {
    const assistant = await this.visible(caller, id);
    await this.repository.react(assistant.id, caller.key.userId, 'like', this.clock.now());
    return (await this.repository.get(assistant.id))!;
  }

  /** Installs once per user; a paid assistant charges its install price to the caller's paying account. */
  async install(caller: Caller, id: string, useWalletBalance: boolean): Promise<{ assistant: Assistant; charged: bigint }> {
    const assistant = await this.visible(caller, id);
    const price = assistant.access.isFree ? 0n : (parseMoney(assistant.access.installPrice) ?? 0n);
    const payer = payerOf(caller.key, useWalletBalance);
    if (price > 0n && !(await this.book.isPositive(payer))) throw new GatewayError('insufficient_balance', 'Balance is too low to install this assistant');
    const added = await this.repository.react(assistant.id, caller.key.userId, 'install', this.clock.now());
    if (added && price > 0n) {
      await this.book.recordNow({ account: payer, amount: -price, kind: 'charge', requestId: caller.requestId, keyId: caller.key.id, model: null, description: `install of assistant ${assistant.mention}` });
    }
    return { assistant, charged: added ? price : 0n };
  }
}
