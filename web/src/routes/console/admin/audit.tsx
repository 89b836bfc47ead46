import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import type { AuditEntry } from '../../../api/admin-types.ts';
import { usePagedList } from '../../../api/paged-list.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { LabelledInput } from '../../../components/labelled-field.tsx';
import { shortTime } from '../../../lib/dates.ts';

/** The actions the gateway records, offered as suggestions in the filter (any text is accepted). */
const ACTIONS = [
  'balance.credit', 'balance.debit', 'bot.create', 'bot.delete', 'bot.update', 'delivery.retry', 'invitation.accept', 'invitation.create',
  'invitation.revoke', 'key.create', 'key.revoke', 'key.update', 'member.leave', 'member.remove', 'member.update', 'model.delete', 'model.put',
  'model.update', 'org.create', 'org.delete', 'org.update', 'payment.credit', 'payment.dispute_lost', 'payment.refund', 'provider.delete',
  'provider.put', 'provider.update', 'user.create', 'user.delete', 'user.email_change', 'user.password_reset', 'user.password_reset_link',
  'user.update', 'voucher.create', 'voucher.redeem', 'voucher.void',
];

const LONGEST = 80;

const shown = (value: unknown): string => {
  const text = value === undefined ? '—' : JSON.stringify(value);
  return text.length > LONGEST ? `${text.slice(0, LONGEST - 1)}…` : text;
};

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isNothing = (value: unknown): boolean => value === null || value === undefined;

/**
 * Before → after, field by field where the states are objects (a created or deleted thing has none on one side): only the
 * fields that changed, "—" where a side has no value.
 */
export function changeOf(before: unknown, after: unknown): string[] {
  if (isNothing(before) && isNothing(after)) return [];
  const wasRecord = isRecord(before) || isNothing(before);
  const isNowRecord = isRecord(after) || isNothing(after);
  if (!wasRecord || !isNowRecord) return [`${shown(before ?? undefined)} → ${shown(after ?? undefined)}`];
  const from = (before ?? {}) as Record<string, unknown>;
  const to = (after ?? {}) as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(from), ...Object.keys(to)])];
  return fields
    .filter((field) => !(isNothing(from[field]) && isNothing(to[field])) && JSON.stringify(from[field]) !== JSON.stringify(to[field]))
    .map((field) => `${field}: ${shown(from[field] ?? undefined)} → ${shown(to[field] ?? undefined)}`);
}

function Actor({ actor }: { actor: AuditEntry['actor'] }) {
  if (actor.type === 'admin') return <>admin token</>;
  if (actor.type === 'system' || !actor.id) return <>{actor.type === 'system' ? 'the gateway' : actor.type}</>;
  return (
    <>
      {actor.type} <Link to="/console/admin/users/$id" params={{ id: actor.id }}>{actor.id}</Link>
    </>
  );
}

function Target({ target }: { target: AuditEntry['target'] }) {
  if (target.id && target.type === 'user') return <>user <Link to="/console/admin/users/$id" params={{ id: target.id }}>{target.id}</Link></>;
  if (target.id && target.type === 'org') return <>org <Link to="/console/admin/orgs/$id" params={{ id: target.id }}>{target.id}</Link></>;
  return <>{`${target.type} ${target.id ?? ''}`.trim()}</>;
}

/** /console/admin/audit: every admin, operator and org-owner action, newest first, filtered by actor, action, target or org. */
export function AdminAuditPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, pages } = usePagedList<AuditEntry>(['admin', 'audit'], '/admin/v1/audit', { limit: 50, ...filters });
  return (
    <>
      <h1>Audit log</h1>
      <FilterForm label="Filter the audit log" onApply={setFilters}>
        <LabelledInput label="Actor id" name="actorId" />
        <LabelledInput label="Action" name="action" list="audit-actions" />
        <LabelledInput label="Target id" name="targetId" />
        <LabelledInput label="Org id" name="orgId" />
        <datalist id="audit-actions">
          {ACTIONS.map((action) => (
            <option key={action} value={action} />
          ))}
        </datalist>
      </FilterForm>
      <DataTable
        caption={Object.keys(filters).length > 0 ? 'Matching actions, newest first' : 'Actions, newest first'}
        what="the audit log"
        empty="No actions match."
        rows={rows}
        rowKey={(entry) => entry.id}
        state={pages}
        more={pages}
        columns={[
          { header: 'Time (UTC)', cell: (entry) => shortTime(entry.at), rowHeader: true },
          { header: 'Actor', cell: (entry) => <Actor actor={entry.actor} /> },
          { header: 'Action', cell: (entry) => <span className="mono">{entry.action}</span> },
          { header: 'Target', cell: (entry) => <Target target={entry.target} /> },
          {
            header: 'Change',
            cell: (entry) => (
              <ul className="plain change">
                {changeOf(entry.before, entry.after).map((line) => (
                  <li key={line} className="mono break">
                    {line}
                  </li>
                ))}
              </ul>
            ),
          },
          { header: 'IP', cell: (entry) => entry.actor.ip ?? '—' },
        ]}
      />
    </>
  );
}
