import { useQueryClient } from '@tanstack/react-query';
import { Link, Outlet, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { api, rememberCsrf } from '../api/client.ts';
import { useMe, useSession } from '../api/session.ts';
import { NavLinks, type NavLink } from './nav-links.tsx';
import { ErrorNote, Loading } from './status.tsx';

const LINKS: readonly NavLink[] = [
  { to: '/console', label: 'Overview', exact: true },
  { to: '/console/keys', label: 'API keys' },
  { to: '/console/usage', label: 'Usage' },
  { to: '/console/requests', label: 'Requests' },
  { to: '/console/billing', label: 'Billing' },
  { to: '/console/assistants', label: 'Assistants' },
  { to: '/console/bots', label: 'Bots' },
  { to: '/console/knowledge', label: 'Knowledge' },
  { to: '/console/tasks', label: 'Tasks' },
];

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
  const links: NavLink[] = [
    ...LINKS,
    ...(me.data?.orgs.map((org) => ({ to: '/console/orgs/$id' as const, params: { id: org.id }, label: org.name })) ?? []),
    ...(me.data?.operator ? [{ to: '/console/admin' as const, label: 'Operator' }] : []),
  ];
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        Tollgate
      </Link>
      <NavLinks label="Console" links={links} />
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
