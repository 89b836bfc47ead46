import { GatewayError } from '../../core/errors.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { Actor } from '../audit/audit.ts';
import type { KeyDetails, KeysService } from './keys-service.ts';
import type { KeyChanges, KeyRecord, NewKeyInput } from './keys.ts';

/** What a signed-in user chooses about a key they create; it is always theirs. */
export type OwnKeyInput = Omit<NewKeyInput, 'userId'>;

const noSuchKey = (id: string): GatewayError => new GatewayError('not_found', `No key '${id}'.`, { param: 'id' });
const noSuchOrg = (id: string): GatewayError => new GatewayError('not_found', `Organization '${id}' does not exist.`, { param: 'orgId' });

/**
 * Keys as their users manage them (DESIGN §10): a user sees and edits their own keys; an org's owners and admins also the
 * org's keys of other members; a member may create business keys for their org (the key is theirs). Anything else answers
 * 404 as if it did not exist; a member reaching for another member's org key gets 403.
 */
export class OwnerKeysService {
  constructor(
    private readonly keys: KeysService,
    private readonly accounts: Pick<AccountsService, 'getRole'>,
  ) {}

  /** The user's own keys; with `orgId`, the org's keys (a member: only their own in it). */
  async list(userId: string, page: { orgId?: string; limit: number; cursor?: string }): Promise<{ keys: KeyDetails[]; nextCursor: string | undefined }> {
    let owner: string | undefined = userId;
    if (page.orgId !== undefined) {
      const role = await this.accounts.getRole(page.orgId, userId);
      if (!role) throw noSuchOrg(page.orgId);
      if (role !== 'member') owner = undefined;
    }
    const found = await this.keys.list({
      ...(owner !== undefined ? { userId: owner } : {}),
      ...(page.orgId !== undefined ? { orgId: page.orgId } : {}),
      limit: page.limit,
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    });
    return { keys: await Promise.all(found.keys.map((key) => this.keys.details(key))), nextCursor: found.nextCursor };
  }

  async create(userId: string, input: OwnKeyInput, actor: Actor): Promise<{ details: KeyDetails; text: string }> {
    if (input.orgId !== null && !(await this.accounts.getRole(input.orgId, userId))) throw noSuchOrg(input.orgId);
    const { key, text } = await this.keys.create({ ...input, userId }, actor);
    const stored = await this.keys.get(key.id);
    if (!stored) throw noSuchKey(key.id);
    return { details: await this.keys.details(stored), text };
  }

  async get(userId: string, id: string): Promise<KeyDetails> {
    return this.keys.details(await this.reachable(userId, id));
  }

  async update(userId: string, id: string, changes: KeyChanges, actor: Actor): Promise<KeyDetails> {
    await this.reachable(userId, id);
    const updated = await this.keys.update(id, changes, actor);
    if (!updated) throw noSuchKey(id);
    return this.keys.details(updated);
  }

  async revoke(userId: string, id: string, actor: Actor): Promise<void> {
    await this.reachable(userId, id);
    if (!(await this.keys.revoke(id, actor))) throw noSuchKey(id);
  }

  /** The live key if the user may manage it: theirs, or their org's when they own or administer the org. */
  private async reachable(userId: string, id: string): Promise<KeyRecord> {
    const key = await this.keys.get(id);
    if (!key || key.revokedAt !== null) throw noSuchKey(id);
    if (key.userId === userId) return key;
    const role = key.orgId === null ? undefined : await this.accounts.getRole(key.orgId, userId);
    if (!role) throw noSuchKey(id);
    if (role === 'member') throw new GatewayError('forbidden', "Only the organization's owners and admins manage other members' keys.");
    return key;
  }
}

