import type { Key, SpendPeriod } from '../api/types.ts';

/** The fields a key's owner sets on creation and edit (DESIGN §10 "Key limits"); `prefix` keeps ids unique per form. */
export function KeyFields({ initial }: { initial?: Key }) {
  return (
    <>
      <label>
        Allowed models <span className="muted">(comma-separated; empty allows every model)</span>
        <input name="allowedModels" defaultValue={initial?.allowedModels?.join(', ') ?? ''} placeholder="gpt-4o-mini, claude-sonnet-4-5" />
      </label>
      <div className="row">
        <label>
          Spending limit
          <input name="limitAmount" inputMode="decimal" pattern="\d+(\.\d+)?" defaultValue={initial?.limit?.amount ?? ''} placeholder="none" />
        </label>
        <label>
          Limit period
          <select name="limitPeriod" defaultValue={initial?.limit?.period ?? 'month'}>
            <option value="day">per day</option>
            <option value="week">per week</option>
            <option value="month">per month</option>
            <option value="total">in total</option>
          </select>
        </label>
      </div>
      <div className="row">
        <label>
          Expires on (UTC)
          <input name="expiresOn" type="date" defaultValue={initial?.expiresAt?.slice(0, 10) ?? ''} />
        </label>
        <label>
          Requests per minute
          <input name="rpm" type="number" min={1} defaultValue={initial?.rpm ?? ''} />
        </label>
        <label>
          Tokens per minute
          <input name="tpm" type="number" min={1} defaultValue={initial?.tpm ?? ''} />
        </label>
      </div>
    </>
  );
}

/** The form's key fields as the API takes them; an emptied field clears the setting (null). */
export function keyFieldsOf(form: FormData) {
  const text = (name: string) => String(form.get(name) ?? '').trim();
  const models = text('allowedModels')
    .split(',')
    .map((model) => model.trim())
    .filter(Boolean);
  const number = (name: string) => (text(name) ? Number(text(name)) : null);
  return {
    allowedModels: models.length > 0 ? models : null,
    limit: text('limitAmount') ? { amount: text('limitAmount'), period: text('limitPeriod') as SpendPeriod } : null,
    expiresAt: text('expiresOn') ? `${text('expiresOn')}T00:00:00Z` : null,
    rpm: number('rpm'),
    tpm: number('tpm'),
  };
}
