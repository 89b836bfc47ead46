import { useState } from 'react';
import { AdminKeysTable } from '../../../components/admin/keys-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { LabelledInput } from '../../../components/labelled-field.tsx';

/** /console/admin/keys: every account's keys, found by name or id, user or org; disable, enable, revoke. */
export function AdminKeysPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { revoked, ...rest } = filters;
  return (
    <>
      <h1>Keys</h1>
      <p className="muted">A disabled key is refused (401) until enabled again; a revoked key stops for good. Both take effect at once on every node.</p>
      <FilterForm label="Find keys" onApply={setFilters}>
        <LabelledInput label="Name, id or start of the key" name="query" type="search" />
        <LabelledInput label="User id" name="userId" />
        <LabelledInput label="Org id" name="orgId" />
        <label className="switch">
          <input type="checkbox" name="revoked" value="true" />
          Include revoked keys
        </label>
      </FilterForm>
      <AdminKeysTable params={{ ...rest, ...(revoked ? { revoked: 'true' } : {}) }} caption={Object.keys(filters).length > 0 ? 'Keys that match, newest first' : 'Keys, newest first'} />
    </>
  );
}
