import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../../api/client.ts';
import type { AdminKey, AdminModel, AdminUser, List, UsageRow } from '../../../api/types.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { formValues } from '../../../components/filter-form.tsx';
import { LabelledInput, LabelledSelect } from '../../../components/labelled-field.tsx';
import { ErrorNote } from '../../../components/status.tsx';
import { daysAgo, shortTime, today } from '../../../lib/dates.ts';

const modelsQuery = { queryKey: ['admin', 'models'], queryFn: () => api<List<AdminModel>>('GET', '/admin/v1/models') };

/** /console/admin/models (operators only, OperatorLayout): the catalog with prices editable in place, and retirement with an analogue. */
export function AdminModelsPage() {
  const models = useQuery(modelsQuery);
  const [retiring, setRetiring] = useState<string | null>(null);
  const target = models.data?.data.find((model) => model.id === retiring);
  return (
    <>
      <h1>Models</h1>
      <p className="muted">Prices are per 1,000 tokens in the gateway's currency. Changes apply on every process within a second and are kept by `tollgate models import`.</p>
      {target ? <RetireForm key={target.id} model={target} models={models.data?.data ?? []} onDone={() => setRetiring(null)} /> : null}
      <DataTable
        caption={`The catalog: ${models.data?.data.length ?? 0} models`}
        what="the catalog"
        empty="No models: import a catalog with `tollgate models import`."
        rows={models.data?.data ?? []}
        rowKey={(model) => model.id}
        state={models}
        columns={[
          {
            header: 'Model',
            cell: (model) => (
              <>
                {model.id}
                {model.title && model.title !== model.id ? <div className="muted">{model.title}</div> : null}
              </>
            ),
            rowHeader: true,
          },
          { header: 'Kind', cell: (model) => model.kind },
          { header: 'Prices (input / output per 1K tokens)', cell: (model) => <PriceForm model={model} /> },
          { header: 'Retirement', cell: (model) => <Retirement model={model} /> },
          { header: 'Actions', cell: (model) => <RetirementActions model={model} onRetire={() => setRetiring(model.id)} /> },
        ]}
      />
    </>
  );
}

/** A change to one model (PATCH /admin/v1/models/:id); the catalog is read again after it. */
function useModelChange(model: AdminModel) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: Record<string, unknown>) => api<AdminModel>('PATCH', `/admin/v1/models/${encodeURIComponent(model.id)}`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['admin', 'models'] }),
  });
}

function PriceForm({ model }: { model: AdminModel }) {
  const save = useModelChange(model);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    save.mutate({ cost_context: values.cost_context ?? '', cost_completion: values.cost_completion ?? '' });
  };
  return (
    <>
      <form onSubmit={submit} className="row">
        <input name="cost_context" defaultValue={model.cost_context} inputMode="decimal" size={9} aria-label={`Input price of ${model.id}`} required />
        <input name="cost_completion" defaultValue={model.cost_completion} inputMode="decimal" size={9} aria-label={`Output price of ${model.id}`} required />
        <button type="submit" disabled={save.isPending} aria-label={`Save prices of ${model.id}`}>
          Save
        </button>
      </form>
      {model.cost_request !== undefined ? <div className="muted">per request: {model.cost_request}</div> : null}
      {model.cost_minute !== undefined ? <div className="muted">per minute: {model.cost_minute}</div> : null}
      <ErrorNote error={save.error} what={`Saving prices of ${model.id} failed`} />
      {save.isSuccess ? <p role="status">Saved.</p> : null}
    </>
  );
}

function Retirement({ model }: { model: AdminModel }) {
  if (!model.deprecated_at) return <>—</>;
  return (
    <>
      {model.deprecated ? 'retired' : 'retires'} {shortTime(model.deprecated_at).slice(0, 10)}
      <div className="muted">{model.deprecation_redirect_to ? `analogue: ${model.deprecation_redirect_to}` : 'no analogue (410)'}</div>
    </>
  );
}

function RetirementActions({ model, onRetire }: { model: AdminModel; onRetire: () => void }) {
  const cancel = useModelChange(model);
  return (
    <>
      <button type="button" onClick={onRetire} aria-label={`Retire ${model.id}`}>
        {model.deprecated_at ? 'Change retirement' : 'Retire'}
      </button>
      {model.deprecated_at ? (
        <button type="button" onClick={() => cancel.mutate({ deprecated_at: null, deprecation_redirect_to: null })} aria-label={`Cancel retirement of ${model.id}`}>
          Cancel retirement
        </button>
      ) : null}
      <ErrorNote error={cancel.error} what={`Cancelling the retirement of ${model.id} failed`} />
    </>
  );
}

/** Who called the model in the last 7 UTC days: /admin/v1/usage has no model filter, so it is grouped by model and key and filtered here. */
async function recentCallers(modelId: string): Promise<Array<{ key: AdminKey | { id: string; name: string; userId: null; orgId: null }; user: AdminUser | null; requests: number; cost: string }>> {
  const usage = await api<List<UsageRow>>('GET', `/admin/v1/usage${query({ from: daysAgo(6), to: today(), groupBy: 'model,key' })}`);
  const rows = usage.data.filter((row) => row.model === modelId && row.keyId);
  return Promise.all(
    rows.map(async (row) => {
      const key = await api<AdminKey>('GET', `/admin/v1/keys/${encodeURIComponent(row.keyId!)}`).catch(() => ({ id: row.keyId!, name: '(deleted key)', userId: null, orgId: null }));
      const user = key.userId ? await api<AdminUser>('GET', `/admin/v1/users/${encodeURIComponent(key.userId)}`).catch(() => null) : null;
      return { key, user, requests: row.requests, cost: row.cost };
    }),
  );
}

function RetireForm({ model, models, onDone }: { model: AdminModel; models: AdminModel[]; onDone: () => void }) {
  const client = useQueryClient();
  const callers = useQuery({ queryKey: ['admin', 'callers', model.id], queryFn: () => recentCallers(model.id), staleTime: 0 });
  const retire = useMutation({
    mutationFn: (body: { deprecated_at: string; deprecation_redirect_to: string | null }) => api<AdminModel>('PATCH', `/admin/v1/models/${encodeURIComponent(model.id)}`, body),
    onSuccess: async () => {
      await client.invalidateQueries({ queryKey: ['admin', 'models'] });
      onDone();
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const analogue = String(form.get('analogue') ?? '');
    retire.mutate({ deprecated_at: `${String(form.get('date'))}T00:00:00.000Z`, deprecation_redirect_to: analogue || null });
  };
  const analogues = models.filter((candidate) => candidate.id !== model.id && candidate.kind === model.kind && !candidate.deprecated);
  return (
    <section aria-labelledby="retire-heading" className="panel">
      <h2 id="retire-heading">Retire {model.id}</h2>
      <h3>Called in the last 7 days</h3>
      <DataTable
        caption={`Keys that called ${model.id} in the last 7 days`}
        what="who called it"
        empty={`No key called ${model.id} in the last 7 days.`}
        rows={callers.data ?? []}
        rowKey={(caller) => caller.key.id}
        state={callers}
        columns={[
          { header: 'Key', cell: (caller) => caller.key.name, rowHeader: true },
          { header: 'Key id', cell: (caller) => caller.key.id },
          { header: 'User', cell: (caller) => (caller.user ? `${caller.user.name}${caller.user.email ? ` <${caller.user.email}>` : ''}` : '—') },
          { header: 'Requests', cell: (caller) => caller.requests, numeric: true },
          { header: 'Cost', cell: (caller) => caller.cost, numeric: true },
        ]}
      />
      <form onSubmit={submit}>
        <LabelledInput label="Retirement date (UTC, from the start of the day)" name="date" type="date" required defaultValue={model.deprecated_at ? model.deprecated_at.slice(0, 10) : today()} />
        <LabelledSelect
          label="Analogue"
          name="analogue"
          defaultValue={model.deprecation_redirect_to ?? ''}
          choices={[{ value: '', label: 'None: requests fail with 410 after the date' }, ...analogues.map((candidate) => ({ value: candidate.id, label: candidate.id }))]}
        />
        <ErrorNote error={retire.error} what="Retiring failed" />
        <div className="actions">
          <button type="button" onClick={onDone}>
            Cancel
          </button>
          <button type="submit" className="danger" disabled={!callers.isSuccess || retire.isPending}>
            Confirm retirement
          </button>
        </div>
      </form>
    </section>
  );
}
