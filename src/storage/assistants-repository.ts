import { sql, type Kysely, type Selectable } from 'kysely';
import type { Assistant, AssistantSettings, AssistantsRepository, CatalogFilter, ChatMessageRecord } from '../features/assistants/assistant.ts';
import type { AssistantsTable, Database } from './schema.ts';

const toAssistant = (row: Selectable<AssistantsTable>): Assistant => ({
  ...(JSON.parse(row.data) as AssistantSettings),
  id: row.id,
  ownerId: row.owner_id,
  mention: row.mention,
  likes: row.likes,
  embedding: row.embedding === null ? null : (JSON.parse(row.embedding) as number[][]),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const settingsOf = (assistant: Assistant): AssistantSettings => {
  const { id: _id, ownerId: _owner, mention: _mention, likes: _likes, embedding: _embedding, createdAt: _created, updatedAt: _updated, ...settings } = assistant;
  return settings;
};

const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (character) => `\\${character}`);

/** Assistants, their reactions (likes, installs) and chat memory. */
export class SqlAssistantsRepository implements AssistantsRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(assistant: Assistant): Promise<void> {
    await this.db
      .insertInto('assistants')
      .values({
        id: assistant.id,
        owner_id: assistant.ownerId,
        mention: assistant.mention,
        title: assistant.title,
        is_private: assistant.access.isPrivate ? 1 : 0,
        org_id: assistant.access.orgId,
        data: JSON.stringify(settingsOf(assistant)),
        likes: 0,
        embedding: assistant.embedding ? JSON.stringify(assistant.embedding) : null,
        created_at: assistant.createdAt,
        updated_at: assistant.updatedAt,
      })
      .execute();
  }

  async update(assistant: Assistant): Promise<void> {
    await this.db
      .updateTable('assistants')
      .set({
        mention: assistant.mention,
        title: assistant.title,
        is_private: assistant.access.isPrivate ? 1 : 0,
        org_id: assistant.access.orgId,
        data: JSON.stringify(settingsOf(assistant)),
        embedding: assistant.embedding ? JSON.stringify(assistant.embedding) : null,
        updated_at: assistant.updatedAt,
      })
      .where('id', '=', assistant.id)
      .execute();
  }

  async delete(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const deleted = await trx.deleteFrom('assistants').where('id', '=', id).executeTakeFirst();
      await trx.deleteFrom('assistant_reactions').where('assistant_id', '=', id).execute();
      await trx.deleteFrom('chat_messages').where('assistant_id', '=', id).execute();
      return Number(deleted.numDeletedRows) > 0;
    });
  }

  async get(id: string): Promise<Assistant | undefined> {
    const row = await this.db.selectFrom('assistants').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toAssistant(row);
  }

  async byMention(mention: string): Promise<Assistant | undefined> {
    const row = await this.db.selectFrom('assistants').selectAll().where(sql`lower(mention)`, '=', mention.toLowerCase()).executeTakeFirst();
    return row && toAssistant(row);
  }

  /** The owner's assistants, newest first, optionally filtered by a case-insensitive substring of title or code. */
  async listByOwner(ownerId: string, query: string, limit: number, offset: number): Promise<{ total: number; items: Assistant[] }> {
    let base = this.db.selectFrom('assistants').where('owner_id', '=', ownerId);
    if (query) {
      const pattern = `%${escapeLike(query.toLowerCase())}%`;
      base = base.where((eb) => eb.or([eb(sql`lower(title)`, 'like', sql`${pattern} escape '\\'`), eb(sql`lower(mention)`, 'like', sql`${pattern} escape '\\'`)]));
    }
    const [count, rows] = await Promise.all([
      base.select((eb) => eb.fn.countAll<string | number>().as('count')).executeTakeFirstOrThrow(),
      base.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    ]);
    return { total: Number(count.count), items: rows.map(toAssistant) };
  }

  /** Every assistant the viewer may find in the catalog: public ones, and private ones of the viewer's organisations. */
  async catalog(filter: CatalogFilter): Promise<Assistant[]> {
    let query = this.db.selectFrom('assistants').selectAll();
    query = filter.orgIds.length > 0 ? query.where((eb) => eb.or([eb('is_private', '=', 0), eb('org_id', 'in', [...filter.orgIds])])) : query.where('is_private', '=', 0);
    if (filter.mention !== undefined) query = query.where(sql`lower(mention)`, '=', filter.mention.toLowerCase());
    return (await query.execute()).map(toAssistant);
  }

  /** Adds a like or an install once per user; returns false when it was already there. */
  async react(assistantId: string, userId: string, kind: 'like' | 'install', at: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const inserted = await trx
        .insertInto('assistant_reactions')
        .values({ assistant_id: assistantId, user_id: userId, kind, created_at: at })
        .onConflict((conflict) => conflict.columns(['assistant_id', 'user_id', 'kind']).doNothing())
        .executeTakeFirst();
      const added = Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0;
      if (added && kind === 'like') await trx.updateTable('assistants').set({ likes: sql`likes + 1` }).where('id', '=', assistantId).execute();
      return added;
    });
  }

  installedBy(userId: string, assistantIds: readonly string[]): Promise<Set<string>> {
    return this.reactedBy(userId, 'install', assistantIds);
  }

  likedBy(userId: string, assistantIds: readonly string[]): Promise<Set<string>> {
    return this.reactedBy(userId, 'like', assistantIds);
  }

  private async reactedBy(userId: string, kind: 'like' | 'install', assistantIds: readonly string[]): Promise<Set<string>> {
    if (assistantIds.length === 0) return new Set();
    const rows = await this.db
      .selectFrom('assistant_reactions')
      .select('assistant_id')
      .where('user_id', '=', userId)
      .where('kind', '=', kind)
      .where('assistant_id', 'in', [...assistantIds])
      .execute();
    return new Set(rows.map((row) => row.assistant_id));
  }

  async appendMessages(messages: readonly ChatMessageRecord[]): Promise<void> {
    const first = messages[0];
    if (!first) return;
    await this.db.transaction().execute(async (trx) => {
      const last = await trx
        .selectFrom('chat_messages')
        .select((eb) => eb.fn.max('seq').as('seq'))
        .where('owner_id', '=', first.ownerId)
        .where('chat_id', '=', first.chatId)
        .executeTakeFirst();
      const start = Number(last?.seq ?? 0) + 1;
      await trx
        .insertInto('chat_messages')
        .values(messages.map((message, index) => ({ id: message.id, chat_id: message.chatId, owner_id: message.ownerId, assistant_id: message.assistantId, seq: start + index, role: message.role, content: message.content, created_at: message.at })))
        .execute();
    });
  }

  /** The last `limit` messages of a chat, oldest first. */
  async recentMessages(ownerId: string, chatId: string, limit: number): Promise<Array<{ role: 'user' | 'assistant'; content: string }>> {
    if (limit <= 0) return [];
    const rows = await this.db
      .selectFrom('chat_messages')
      .select(['role', 'content'])
      .where('owner_id', '=', ownerId)
      .where('chat_id', '=', chatId)
      .orderBy('seq', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse().map((row) => ({ role: row.role, content: row.content }));
  }
}
