import type { Kysely } from 'kysely';
import type { AuditEntry, AuditQuery, AuditRepository } from '../features/audit/audit.ts';
import type { Database } from './schema.ts';

/** Cursor of a page: the last entry's time and id (entries are ordered by both, newest first). */
const encodeCursor = (entry: AuditEntry): string => Buffer.from(`${entry.at}:${entry.id}`).toString('base64url');
function decodeCursor(cursor: string): { at: number; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  return at && id && /^\d+$/.test(at) ? { at: Number(at), id } : undefined;
}

const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));
const parse = (text: string | null): unknown => (text === null ? null : (JSON.parse(text) as unknown));

export class SqlAuditRepository implements AuditRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(entry: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        id: entry.id,
        at: entry.at,
        actor_type: entry.actor.type,
        actor_id: entry.actor.id,
        action: entry.action,
        target_type: entry.target.type,
        target_id: entry.target.id,
        before: json(entry.before),
        after: json(entry.after),
        ip: entry.actor.ip,
        org_id: entry.orgId,
      })
      .execute();
  }

  async list(query: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('audit_log').selectAll();
    if (query.orgId !== undefined) select = select.where('org_id', '=', query.orgId);
    if (query.actorId !== undefined) select = select.where('actor_id', '=', query.actorId);
    if (query.action !== undefined) select = select.where('action', '=', query.action);
    if (query.targetId !== undefined) select = select.where('target_id', '=', query.targetId);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    if (after) select = select.where((eb) => eb.or([eb('at', '<', after.at), eb.and([eb('at', '=', after.at), eb('id', '<', after.id)])]));
    const rows = await select.orderBy('at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
    const entries: AuditEntry[] = rows.slice(0, query.limit).map((row) => ({
      id: row.id,
      at: Number(row.at),
      actor: { type: row.actor_type as AuditEntry['actor']['type'], id: row.actor_id, ip: row.ip },
      action: row.action,
      target: { type: row.target_type, id: row.target_id },
      before: parse(row.before),
      after: parse(row.after),
      orgId: row.org_id,
    }));
    return { entries, nextCursor: rows.length > query.limit ? encodeCursor(entries[entries.length - 1]!) : undefined };
  }
}
