/** Who did something: the admin token, an operator's session, a user (signed in, or by a management key), or the gateway itself. */
export interface Actor {
  type: 'admin' | 'operator' | 'user' | 'system';
  id: string | null;
  ip: string | null;
}

/** One audited action (DESIGN §4): actor, action, target, before → after, at, ip. */
export interface AuditEntry {
  id: string;
  at: number;
  actor: Actor;
  /** Dotted verb: `balance.credit`, `key.create`, `key.revoke`, `org.update`, `member.update`, `model.retire`, … */
  action: string;
  target: { type: string; id: string | null };
  /** The state before and after, as plain JSON values; secrets never go in. */
  before: unknown;
  after: unknown;
  /** The organisation it concerns, when it does: its owners and admins may read it. */
  orgId: string | null;
}

export interface AuditQuery {
  orgId?: string;
  actorId?: string;
  action?: string;
  targetId?: string;
  limit: number;
  /** Entries older than this cursor (from the previous page's `nextCursor`). */
  cursor?: string;
}

export interface AuditRepository {
  insert(entry: AuditEntry): Promise<void>;
  /** Newest first; `nextCursor` is undefined on the last page. */
  list(query: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | undefined }>;
}
