import { Link } from '@tanstack/react-router';
import { useSession } from '../api/session.ts';
import { NavLinks, type NavLink } from './nav-links.tsx';

const SIGNED_OUT: readonly NavLink[] = [
  { to: '/login', label: 'Sign in' },
  { to: '/signup', label: 'Sign up' },
];

/** The public pages' top bar (storefront, assistant pages): the console for a signed-in visitor, sign in or up for others. */
export function SiteHeader() {
  const session = useSession();
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        Tollgate
      </Link>
      <NavLinks label="Site" links={session.data ? [{ to: '/console', label: 'Console' }] : SIGNED_OUT} />
    </header>
  );
}
