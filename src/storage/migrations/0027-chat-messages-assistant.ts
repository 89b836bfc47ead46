import type { Kysely } from 'kysely';

/**
 * Deleting an assistant deletes its chats' messages by assistant id; chat_messages had an index by owner and chat only, so the
 * delete scanned every message of every assistant.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('chat_messages_assistant').on('chat_messages').column('assistant_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('chat_messages_assistant').execute();
}
