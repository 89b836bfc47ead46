import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { api, rememberCsrf } from '../api/client.ts';
import { useMe, useSession } from '../api/session.ts';
import { ErrorNote, Loading } from './status.tsx';

const LINKS = [
  { to: '/console', label: 'Overview', exact: true },
  { to: '/console/keys', label: 'API keys' },
  { to: '/console/usage', label: 'Usage' },
  { to: '/console/requests', label: 'Requests' },
  { to: '/console/billing', label: 'Billing' },
  { to: '/console/assistants', label: 'Assistants' },
  { to: '/console/bots', label: 'Bots' },
  { to: '/console/knowledge', label: 'Knowledge' },
  { to: '/console/tasks', label: 'Tasks' },
] as const;

/** The signed-in frame of every /console page: navigation, the user, sign out (the route's guard sends others to /login). */
export function ConsoleLayout() {
  const session = useSession();
  if (session.isPending) return <Loading what="your session" />;
  if (session.error) return <ErrorNote error={session.error} what="Checking your session" />;
  return (
    <div className="console">
      <ConsoleNav />
      <main id="main">
        <Outlet />
      </main>
    </div>
  );
}

function ConsoleNav() {
  const me = useMe();
  const client = useQueryClient();
  const navigate = useNavigate();
  const [error, setError] = useState<unknown>(null);
  const signOut = async () => {
    try {
      await api('POST', '/api/v1/auth/logout');
      rememberCsrf(undefined);
      client.clear();
      client.setQueryData(['session'], null);
      await navigate({ to: '/login' });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        Tollgate
      </Link>
      <nav aria-label="Console">
        <ul>
          {LINKS.map((link) => (
            <li key={link.to}>
              <Link to={link.to} activeOptions={{ exact: 'exact' in link }} activeProps={{ 'aria-current': 'page' }}>
                {link.label}
              </Link>
            </li>
          ))}
          {me.data?.orgs.map((org) => (
            <li key={org.id}>
              <Link to="/console/orgs/$id" params={{ id: org.id }} activeProps={{ 'aria-current': 'page' }}>
                {org.name}
              </Link>
            </li>
          ))}
          {me.data?.operator ? (
            <li>
              <Link to="/console/admin" activeProps={{ 'aria-current': 'page' }}>
                Operator
              </Link>
            </li>
          ) : null}
        </ul>
      </nav>
      <div className="who">
        <span className="muted">{me.data?.email ?? me.data?.name ?? ''}</span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
        <ErrorNote error={error} what="Signing out" />
      </div>
    </header>
  );
}
