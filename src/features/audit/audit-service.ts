import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { Actor, AuditEntry, AuditQuery, AuditRepository } from './audit.ts';

/** The operator's door (admin token, CLI) as an actor. */
export const ADMIN_ACTOR: Actor = { type: 'admin', id: null, ip: null };

/** The gateway itself (the demo user of a first start). */
export const SYSTEM_ACTOR: Actor = { type: 'system', id: null, ip: null };

/**
 * Records every admin, operator and org-owner action. Services call `record` after the change succeeded, with what the
 * target looked like before and after; every door (admin API, CLI, management API, console) thus leaves the same trail.
 */
export class AuditService {
  constructor(
    private readonly repository: AuditRepository,
    private readonly clock: Clock,
  ) {}

  async record(actor: Actor, action: string, target: { type: string; id: string | null }, change: { before?: unknown; after?: unknown; orgId?: string | null } = {}): Promise<AuditEntry> {
    const entry: AuditEntry = {
      id: newId('audit'),
      at: this.clock.now(),
      actor,
      action,
      target,
      before: change.before ?? null,
      after: change.after ?? null,
      orgId: change.orgId ?? null,
    };
    await this.repository.insert(entry);
    return entry;
  }

  list(query: AuditQuery): Promise<{ entries: AuditEntry[]; nextCursor: string | undefined }> {
    return this.repository.list(query);
  }
}
