import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { useRef, useState, type FormEvent } from 'react';
import { newChatId, streamChat, type AssistantCard } from '../api/assistants.ts';
import { ApiError, api } from '../api/client.ts';
import { useSession } from '../api/session.ts';
import type { CatalogModel, List } from '../api/types.ts';
import { installPriceText } from '../components/assistant-catalog.tsx';
import { ConfirmButton } from '../components/confirm-button.tsx';
import { SiteHeader } from '../components/site-header.tsx';
import { ErrorNote, Loading } from '../components/status.tsx';

/** Earlier messages of this page's chat sent with each new one (the assistant remembers the conversation). */
const MEMORY = 20;

interface ChatLine {
  id: number;
  from: 'you' | 'assistant';
  text: string;
  /** The turn's cost (decimal), once the reply is complete. */
  cost?: string;
}

const day = (iso: string): string => iso.slice(0, 10);

/** Pictures load only from this gateway (its Content-Security-Policy refuses other hosts); other links are shown as text. */
const ownPicture = (picture: string): boolean => picture.startsWith('/') && !picture.startsWith('//');

/** `/a/:mention` (DESIGN §11, SPEC 2.6: the mention is its address): the assistant's card for everyone, a chat for signed-in users. */
export function AssistantPage() {
  const { mention } = useParams({ from: '/a/$mention' });
  const session = useSession();
  const card = useQuery({
    queryKey: ['assistant-page', mention, session.data?.user.id ?? null],
    queryFn: () => api<AssistantCard>('GET', `/api/v1/assistants/by-mention/${encodeURIComponent(mention)}`),
    enabled: !session.isPending,
    retry: false,
  });
  const notFound = card.error instanceof ApiError && card.error.status === 404;
  return (
    <div>
      <SiteHeader />
      <main id="main">
        {session.isPending || card.isPending ? <Loading what={`@${mention}`} /> : null}
        {notFound ? (
          <>
            <h1>Assistant not found</h1>
            <p>
              No assistant you may see has the code “@{mention}”: it may be private, or its code may have changed. <Link to="/">Search the assistant catalog</Link>
              {session.data ? null : (
                <>
                  {' '}
                  or <Link to="/login" search={{ next: `/a/${mention}` }}>sign in</Link> to see your own
                </>
              )}
              .
            </p>
          </>
        ) : (
          <ErrorNote error={card.error} what="Loading the assistant" />
        )}
        {card.data ? (
          <>
            <AssistantCardView card={card.data} mine={card.data.owner.id === session.data?.user.id} />
            {session.data ? <Reactions card={card.data} /> : null}
            {session.data ? (
              <Chat card={card.data} />
            ) : (
              <section aria-labelledby="chat-heading">
                <h2 id="chat-heading">Chat</h2>
                <p>
                  <Link to="/login" search={{ next: `/a/${card.data.mention}` }}>
                    Sign in to chat
                  </Link>{' '}
                  with {card.data.title}. Messages are charged to your balance per token, at the model’s prices.
                </p>
              </section>
            )}
          </>
        ) : null}
      </main>
    </div>
  );
}

function AssistantCardView({ card, mine }: { card: AssistantCard; mine: boolean }) {
  const models = useQuery({ queryKey: ['catalog'], queryFn: () => api<List<CatalogModel>>('GET', '/api/v1/models') });
  const model = models.data?.data.find((entry) => entry.id === card.modelId);
  return (
    <article aria-labelledby="assistant-title" className="assistant-card">
      {ownPicture(card.picture) ? <img src={card.picture} alt="" className="avatar" /> : null}
      <h1 id="assistant-title">{card.title}</h1>
      {card.subtitle ? <p className="subtitle">{card.subtitle}</p> : null}
      {card.description ? <p className="description">{card.description}</p> : null}
      <dl className="details">
        <div>
          <dt>Code</dt>
          <dd className="mono">@{card.mention}</dd>
        </div>
        <div>
          <dt>Author</dt>
          <dd>{card.owner.name || '—'}</dd>
        </div>
        <div>
          <dt>Model</dt>
          <dd>
            <span className="mono">{card.modelId}</span>
            {model ? (
              <span className="muted">
                {' '}
                ({model.input_per_million} in, {model.output_per_million} out per 1M tokens)
              </span>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Price</dt>
          <dd>{installPriceText(card.access)}</dd>
        </div>
        <div>
          <dt>Likes</dt>
          <dd>{card.likes}</dd>
        </div>
        <div>
          <dt>Visibility</dt>
          <dd>{card.access.isPrivate ? 'Private' : 'Public'}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd>{day(card.updateDate)}</dd>
        </div>
        {card.picture && !ownPicture(card.picture) ? (
          <div>
            <dt>Picture</dt>
            <dd className="mono">{card.picture}</dd>
          </div>
        ) : null}
      </dl>
      {mine ? (
        <p>
          This is your assistant: <Link to="/console/assistants">change it in the console</Link>.
        </p>
      ) : null}
    </article>
  );
}

/**
 * Like and install (SPEC 4.6 through the management API): a like counts once per user (the page says "Liked" once it is
 * given); an install too, and a paid one is charged to the user's balance, so it asks first. Each answers the card as it is
 * now, which the page then shows.
 */
function Reactions({ card }: { card: AssistantCard }) {
  const client = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => client.invalidateQueries({ queryKey: ['assistant-page', card.mention] });
  const like = useMutation({
    mutationFn: () => api<AssistantCard>('POST', `/api/v1/assistants/${card.id}/like`),
    onSuccess: async () => {
      setDone(`You like ${card.title}.`);
      await refresh();
    },
  });
  const install = useMutation({
    mutationFn: () => api<AssistantCard & { charged: string }>('POST', `/api/v1/assistants/${card.id}/install`),
    onSuccess: async (answer) => {
      setDone(Number(answer.charged) === 0 ? `${card.title} is installed.` : `${card.title} is installed; ${answer.charged} was charged to your balance.`);
      await refresh();
    },
  });
  const free = card.access.isFree || Number(card.access.installPrice) === 0;
  return (
    <section aria-label="Like and install" className="actions">
      {card.isLiked ? (
        <span>Liked</span>
      ) : (
        <button type="button" onClick={() => like.mutate()} disabled={like.isPending}>
          Like
        </button>
      )}{' '}
      {card.isInstalled ? (
        <span>Installed</span>
      ) : free ? (
        <button type="button" onClick={() => install.mutate()} disabled={install.isPending}>
          Install
        </button>
      ) : (
        <ConfirmButton
          label={`Install for ${card.access.installPrice}`}
          title={`Install ${card.title}?`}
          message={`Installing ${card.title} charges ${card.access.installPrice} to your balance, once.`}
          confirmLabel={`Pay ${card.access.installPrice} and install`}
          onConfirm={() => install.mutate()}
          disabled={install.isPending}
        />
      )}
      {done ? <p role="status">{done}</p> : null}
      <ErrorNote error={like.error ?? install.error} what={like.error ? 'Liking' : 'Installing'} />
    </section>
  );
}

/** The chat of this page: one chat id per visit; each reply is streamed as it is written and its cost shown when complete. */
function Chat({ card }: { card: AssistantCard }) {
  const client = useQueryClient();
  const chatId = useRef(newChatId());
  const nextId = useRef(1);
  const [lines, setLines] = useState<ChatLine[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const input = useRef<HTMLTextAreaElement>(null);

  const send = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const message = input.current?.value.trim() ?? '';
    if (!message || busy) return;
    const yours = nextId.current++;
    const reply = nextId.current++;
    setLines((current) => [...current, { id: yours, from: 'you', text: message }, { id: reply, from: 'assistant', text: '' }]);
    setBusy(true);
    setError(null);
    const update = (change: (line: ChatLine) => ChatLine) => setLines((current) => current.map((line) => (line.id === reply ? change(line) : line)));
    try {
      const answer = await streamChat(card.id, { chatId: chatId.current, message, maxContext: MEMORY }, (delta) => update((line) => ({ ...line, text: line.text + delta })));
      update((line) => ({ ...line, text: answer.message, cost: answer.usage.total_cost.toFixed(6) }));
      if (input.current) input.current.value = '';
    } catch (caught) {
      setError(caught);
      // A reply that never started is taken back, so the conversation shows only what the assistant said.
      setLines((current) => current.filter((line) => line.id !== reply || line.text !== ''));
    } finally {
      setBusy(false);
      void client.invalidateQueries({ queryKey: ['me'] });
    }
  };

  return (
    <section aria-labelledby="chat-heading" className="chat">
      <h2 id="chat-heading">Chat with {card.title}</h2>
      <div role="log" aria-label="Conversation" aria-live="polite">
        {lines.length === 0 ? (
          <p className="muted">Nothing said yet. Each message and its reply are charged to your balance per token; the cost shows under the reply.</p>
        ) : (
          <ol className="messages">
            {lines.map((line) => (
              <li key={line.id} className={line.from}>
                <strong>{line.from === 'you' ? 'You' : card.title}</strong>
                <p>{line.text || (busy ? '…' : '')}</p>
                {line.cost !== undefined ? <small className="muted">Cost {line.cost}</small> : null}
              </li>
            ))}
          </ol>
        )}
      </div>
      <form onSubmit={(event) => void send(event)}>
        <label>
          Message
          <textarea ref={input} name="message" rows={3} maxLength={100_000} required />
        </label>
        <ErrorNote error={error} what="The message was not answered" />
        {error instanceof ApiError && error.status === 402 ? (
          <p>
            <Link to="/console/billing">Top up your balance</Link> to go on.
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Answering…' : 'Send'}
          </button>
        </div>
      </form>
    </section>
  );
}
