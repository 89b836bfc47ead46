import { useQuery } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type { Assistant, KnowledgeBase } from '../api/assistants.ts';
import { api } from '../api/client.ts';
import { useMe } from '../api/session.ts';
import type { CatalogModel, List } from '../api/types.ts';
import { ErrorNote } from './status.tsx';

/** Every field of SPEC 2.6 a create or update sends (4.4); `mention` only when given. */
export interface AssistantFields {
  mention?: string;
  title: string;
  subtitle: string;
  description: string;
  picture: string;
  instruction: string;
  modelId: string;
  temperature: number;
  sqlStore: boolean;
  access: { isPrivate: boolean; isFree: boolean; installPrice: string; hideSettings: boolean; orgId: string | null };
  database: { id: string; requestFrequency: 'always' | 'auto'; chunks: number } | null;
  mcp: unknown[];
  apiFunctions: unknown[];
}

const MCP_EXAMPLE = '[{"url": "https://tools.example.com/mcp", "name": "tools"}]';
const FUNCTIONS_EXAMPLE = '[{"name": "weather", "description": "Weather in a city", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}, "url": "https://api.example.com/weather", "method": "GET"}]';

/** A JSON array typed into a field, or the reason it is not one. */
function jsonArray(text: string, field: string): unknown[] {
  if (!text.trim()) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${field}: not valid JSON`);
  }
  if (!Array.isArray(parsed)) throw new Error(`${field}: must be a JSON array ([…])`);
  return parsed;
}

/**
 * The create and edit form of an assistant, with every field of SPEC 2.6 (`instruction`, functions and MCP servers
 * included). Fields are sent whole: an update replaces `database`, `mcp` and `apiFunctions` and sets every access field.
 */
export function AssistantForm({ assistant, submitLabel, busy, error, onSubmit }: { assistant?: Assistant; submitLabel: string; busy: boolean; error: unknown; onSubmit: (fields: AssistantFields) => void }) {
  const me = useMe();
  const prefix = useId();
  const models = useQuery({ queryKey: ['catalog'], queryFn: () => api<List<CatalogModel>>('GET', '/api/v1/models') });
  const bases = useQuery({ queryKey: ['knowledge', 'choices'], queryFn: () => api<List<KnowledgeBase>>('GET', '/api/v1/knowledge?limit=100'), retry: false });
  const [formError, setFormError] = useState<unknown>(null);
  const chatModels = (models.data?.data ?? []).filter((model) => model.kind === 'chat' && !model.deprecated);
  const database = assistant?.database ?? null;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '');
    const checked = (name: string) => form.get(name) === 'on';
    try {
      const baseId = text('databaseId').trim();
      const mention = text('mention').trim();
      setFormError(null);
      onSubmit({
        ...(mention ? { mention } : {}),
        title: text('title').trim(),
        subtitle: text('subtitle'),
        description: text('description'),
        picture: text('picture').trim(),
        instruction: text('instruction'),
        modelId: text('modelId'),
        temperature: Number(text('temperature')),
        sqlStore: checked('sqlStore'),
        access: { isPrivate: checked('isPrivate'), isFree: checked('isFree'), installPrice: text('installPrice').trim() || '0', hideSettings: checked('hideSettings'), orgId: text('orgId') || null },
        database: baseId ? { id: baseId, requestFrequency: text('requestFrequency') === 'always' ? 'always' : 'auto', chunks: Number(text('chunks')) } : null,
        mcp: jsonArray(text('mcp'), 'MCP servers'),
        apiFunctions: jsonArray(text('apiFunctions'), 'API functions'),
      });
    } catch (caught) {
      setFormError(caught);
    }
  };

  const id = (name: string) => `${prefix}-${name}`;
  return (
    <form onSubmit={submit} className="assistant-form">
      <fieldset>
        <legend>About</legend>
        <div className="row">
          <label>
            Title <span className="muted">(up to 16 characters)</span>
            <input name="title" required maxLength={16} defaultValue={assistant?.title ?? ''} />
          </label>
          <label>
            Code <span className="muted">(its page /a/code; empty: one is made up)</span>
            <input name="mention" pattern="[A-Za-z0-9_\-]{3,64}" title="3 to 64 letters, digits, _ or -" defaultValue={assistant?.mention ?? ''} className="mono" />
          </label>
        </div>
        <label>
          Subtitle <span className="muted">(up to 32 characters)</span>
          <input name="subtitle" maxLength={32} defaultValue={assistant?.subtitle ?? ''} />
        </label>
        <label>
          Description <span className="muted">(shown in the catalog)</span>
          <textarea name="description" rows={3} maxLength={4000} defaultValue={assistant?.description ?? ''} />
        </label>
        <label>
          Picture link <span className="muted">(avatar; optional)</span>
          <input name="picture" maxLength={2000} defaultValue={assistant?.picture ?? ''} />
        </label>
      </fieldset>
      <fieldset>
        <legend>Behaviour</legend>
        <label>
          Instruction <span className="muted">(the system prompt)</span>
          <textarea name="instruction" rows={5} maxLength={32000} defaultValue={assistant?.instruction ?? ''} />
        </label>
        <div className="row">
          <label>
            Model
            <select name="modelId" required defaultValue={assistant?.modelId ?? 'gpt-4o-mini'} key={chatModels.length}>
              {assistant && !chatModels.some((model) => model.id === assistant.modelId) ? <option value={assistant.modelId}>{assistant.modelId}</option> : null}
              {chatModels.map((model) => (
                <option key={model.id} value={model.id}>
                  {model.id}
                </option>
              ))}
            </select>
          </label>
          <label>
            Temperature <span className="muted">(0 to 1)</span>
            <input name="temperature" type="number" min={0} max={1} step={0.05} required defaultValue={assistant?.temperature ?? '0.7'} />
          </label>
        </div>
        <ErrorNote error={models.error} what="Loading the models" />
      </fieldset>
      <fieldset>
        <legend>Access</legend>
        <label className="switch">
          <input name="isPrivate" type="checkbox" defaultChecked={assistant?.access.isPrivate ?? true} />
          Private <span className="muted">(only you, and the organization’s members when one is chosen; unticked: public in the catalog)</span>
        </label>
        <label>
          Organization
          <select name="orgId" defaultValue={assistant?.access.orgId ?? ''} key={me.data?.orgs.length ?? 0}>
            <option value="">None (yours alone)</option>
            {me.data?.orgs.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name}
              </option>
            ))}
          </select>
        </label>
        <div className="row">
          <label className="switch">
            <input name="isFree" type="checkbox" defaultChecked={assistant?.access.isFree ?? true} />
            Free to install
          </label>
          <label>
            Install price <span className="muted">(when not free)</span>
            <input name="installPrice" inputMode="decimal" pattern="\d+(\.\d+)?" defaultValue={assistant?.access.installPrice ?? '0'} />
          </label>
        </div>
        <label className="switch">
          <input name="hideSettings" type="checkbox" defaultChecked={assistant?.access.hideSettings ?? false} />
          Hide settings from users
        </label>
      </fieldset>
      <fieldset>
        <legend>Knowledge and tools</legend>
        <div className="row">
          {bases.data ? (
            <label>
              Knowledge base
              <select name="databaseId" defaultValue={database?.id ?? ''}>
                <option value="">None</option>
                {database && !bases.data.data.some((base) => base.id === database.id) ? <option value={database.id}>{database.id}</option> : null}
                {bases.data.data.map((base) => (
                  <option key={base.id} value={base.id}>
                    {base.title}
                  </option>
                ))}
              </select>
            </label>
          ) : (
            <label>
              Knowledge base id <span className="muted">(empty: none)</span>
              <input name="databaseId" defaultValue={database?.id ?? ''} className="mono" placeholder="kb_…" />
            </label>
          )}
          <label>
            Knowledge lookup
            <select name="requestFrequency" defaultValue={database?.requestFrequency ?? 'auto'}>
              <option value="auto">When the model asks (a tool)</option>
              <option value="always">For every message</option>
            </select>
          </label>
          <label>
            Chunks per lookup
            <input name="chunks" type="number" min={1} max={20} required defaultValue={database?.chunks ?? 3} />
          </label>
        </div>
        {bases.data && bases.data.data.length === 0 ? <p className="muted">You have no knowledge bases yet; make one on the Knowledge page or with /v1/database/create.</p> : null}
        <label className="switch">
          <input name="sqlStore" type="checkbox" defaultChecked={assistant?.sqlStore ?? false} />
          SQL store <span className="muted">(experimental: a private SQLite database the assistant queries)</span>
        </label>
        <label htmlFor={id('mcp')}>
          MCP servers <span className="muted">(JSON array; empty: none)</span>
        </label>
        <textarea id={id('mcp')} name="mcp" rows={3} className="mono" placeholder={MCP_EXAMPLE} defaultValue={assistant && assistant.mcp.length > 0 ? JSON.stringify(assistant.mcp, null, 2) : ''} />
        <label htmlFor={id('functions')}>
          API functions <span className="muted">(JSON array; empty: none)</span>
        </label>
        <textarea id={id('functions')} name="apiFunctions" rows={3} className="mono" placeholder={FUNCTIONS_EXAMPLE} defaultValue={assistant && assistant.apiFunctions.length > 0 ? JSON.stringify(assistant.apiFunctions, null, 2) : ''} />
      </fieldset>
      <ErrorNote error={formError} what="Check the form" />
      <ErrorNote error={error} what="Saving failed" />
      <div className="actions">
        <button type="submit" disabled={busy}>
          {submitLabel}
        </button>
      </div>
    </form>
  );
}
