import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { Bot, CreatedBot, List } from '../../api/types.ts';
import { AccountSelect } from '../../components/account-select.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { Facts } from '../../components/facts.tsx';
import { LabelledInput } from '../../components/labelled-field.tsx';
import { SecretOnce } from '../../components/secret-once.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';

/** /console/bots: bot integrations (SPEC 4.1): an assistant answering a chat service; token shown once; webhook URL. */
export function BotsPage() {
  const bots = useQuery({ queryKey: ['bots'], queryFn: () => api<List<Bot>>('GET', '/api/v1/bots?limit=100') });
  const [created, setCreated] = useState<CreatedBot | null>(null);
  return (
    <>
      <h1>Bots</h1>
      {created ? (
        <SecretOnce
          heading={`Bot “${created.name}” created`}
          note="Its token authenticates your chat service to /api/bot. Copy it now: it is shown only this once."
          label="Bot token"
          secret={created.token}
          copyLabel="Copy token"
          onDone={() => setCreated(null)}
        />
      ) : null}
      <CreateBot onCreated={setCreated} />
      <section aria-labelledby="your-bots">
        <h2 id="your-bots">Your bots</h2>
        {bots.isPending ? <Loading what="bots" /> : null}
        <ErrorNote error={bots.error} what="Loading bots" />
        {bots.data && bots.data.data.length === 0 ? <p className="empty">No bots yet. Create one with an assistant's id; your chat service then posts its users' messages to {window.location.origin}/api/bot with the bot's token, and replies go to the webhook URL.</p> : null}
        {bots.data?.data.map((bot) => <BotCard key={bot.id} bot={bot} />)}
      </section>
    </>
  );
}

function CreateBot({ onCreated }: { onCreated: (bot: CreatedBot) => void }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (body: unknown) => api<CreatedBot>('POST', '/api/v1/bots', body),
    onSuccess: (bot) => {
      onCreated(bot);
      return client.invalidateQueries({ queryKey: ['bots'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    create.mutate({ name: text('name'), assistantId: text('assistantId'), ...(text('webhookUrl') ? { webhookUrl: text('webhookUrl') } : {}), ...(text('orgId') ? { orgId: text('orgId') } : {}) });
  };
  return (
    <section aria-labelledby="create-bot">
      <h2 id="create-bot">Create a bot</h2>
      <form onSubmit={submit}>
        <div className="row">
          <LabelledInput label="Bot name" name="name" required />
          <LabelledInput label="Assistant id" name="assistantId" required placeholder="asst_…" />
          <AccountSelect label="Paid by" self="Me" name="orgId" defaultValue="" />
        </div>
        <label>
          Webhook URL <span className="muted">(where replies are delivered; optional)</span>
          <input name="webhookUrl" type="url" placeholder="https://chat.example.com/hooks/tollgate" />
        </label>
        <ErrorNote error={create.error} what="Creating the bot failed" />
        <button type="submit" disabled={create.isPending}>
          Create bot
        </button>
      </form>
    </section>
  );
}

function BotCard({ bot }: { bot: Bot }) {
  const client = useQueryClient();
  const update = useMutation({
    mutationFn: (body: unknown) => api<Bot>('PATCH', `/api/v1/bots/${bot.id}`, body),
    onSuccess: () => client.invalidateQueries({ queryKey: ['bots'] }),
  });
  const remove = useMutation({ mutationFn: () => api('DELETE', `/api/v1/bots/${bot.id}`), onSuccess: () => client.invalidateQueries({ queryKey: ['bots'] }) });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget).get('webhookUrl') ?? '').trim();
    update.mutate({ webhookUrl: text || null });
  };
  return (
    <article className="card" aria-labelledby={`bot-${bot.id}`}>
      <h3 id={`bot-${bot.id}`}>{bot.name}</h3>
      <Facts
        facts={[
          ['Bot id', <span className="mono">{bot.id}</span>],
          ['Assistant', <span className="mono">{bot.assistantId}</span>],
        ]}
      />
      <form onSubmit={submit} className="row">
        <LabelledInput label={`Webhook URL of ${bot.name}`} name="webhookUrl" type="url" defaultValue={bot.webhookUrl ?? ''} />
        <button type="submit" disabled={update.isPending}>
          Save webhook URL
        </button>
      </form>
      <ErrorNote error={update.error} what="Saving the webhook URL failed" />
      {update.isSuccess ? <p role="status">Webhook URL saved.</p> : null}
      <ConfirmButton label={`Delete ${bot.name}`} title={`Delete the bot “${bot.name}”?`} message="Its token stops working at once; your chat service can no longer reach the assistant through it." confirmLabel="Delete bot" onConfirm={() => remove.mutate()} />
      <ErrorNote error={remove.error} what="Deleting failed" />
    </article>
  );
}
