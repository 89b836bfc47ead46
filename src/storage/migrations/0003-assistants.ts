import type { Kysely } from 'kysely';

/** Assistants, their catalog likes and installs, chat memory, and knowledge bases with their chunks. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('assistants')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owner_id', 'text', (column) => column.notNull())
    .addColumn('mention', 'text', (column) => column.notNull().unique())
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('is_private', 'integer', (column) => column.notNull())
    .addColumn('org_id', 'text')
    .addColumn('data', 'text', (column) => column.notNull())
    .addColumn('likes', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('embedding', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('assistants_owner').on('assistants').columns(['owner_id', 'created_at']).execute();
  await db.schema
    .createTable('assistant_reactions')
    .addColumn('assistant_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('assistant_reactions_pk', ['assistant_id', 'user_id', 'kind'])
    .execute();
  await db.schema
    .createTable('chat_messages')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('chat_id', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'text', (column) => column.notNull())
    .addColumn('assistant_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('content', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('chat_messages_chat').on('chat_messages').columns(['owner_id', 'chat_id', 'seq']).execute();
  await db.schema
    .createTable('knowledge_bases')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owner_id', 'text', (column) => column.notNull())
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('knowledge_documents')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('base_id', 'text', (column) => column.notNull())
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('knowledge_chunks')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('base_id', 'text', (column) => column.notNull())
    .addColumn('document_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'integer', (column) => column.notNull())
    .addColumn('text', 'text', (column) => column.notNull())
    .addColumn('embedding', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('knowledge_chunks_base').on('knowledge_chunks').columns(['base_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['knowledge_chunks', 'knowledge_documents', 'knowledge_bases', 'chat_messages', 'assistant_reactions', 'assistants']) {
    await db.schema.dropTable(table).execute();
  }
}
