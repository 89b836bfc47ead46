import { Link } from '@tanstack/react-router';
import { useSession } from '../api/session.ts';

/** The public pages' top bar (storefront, assistant pages): the console for a signed-in visitor, sign in or up for others. */
export function SiteHeader() {
  const session = useSession();
  return (
    <header className="topbar">
      <Link to="/" className="brand">
        Tollgate
      </Link>
      <nav aria-label="Site">
        <ul>
          {session.data ? (
            <li>
              <Link to="/console">Console</Link>
            </li>
          ) : (
            <>
              <li>
                <Link to="/login">Sign in</Link>
              </li>
              <li>
                <Link to="/signup">Sign up</Link>
              </li>
            </>
          )}
        </ul>
      </nav>
    </header>
  );
}
