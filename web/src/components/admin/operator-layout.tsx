import { Outlet } from '@tanstack/react-router';
import { useSession } from '../../api/session.ts';
import { NavLinks, type NavLink } from '../nav-links.tsx';
import { OPERATORS_ONLY } from '../status.tsx';

/** The operator pages, in the order of the operator's navigation. */
export const OPERATOR_LINKS: readonly NavLink[] = [
  { to: '/console/admin/users', label: 'Users' },
  { to: '/console/admin/orgs', label: 'Orgs' },
  { to: '/console/admin/keys', label: 'Keys' },
  { to: '/console/admin/models', label: 'Models' },
  { to: '/console/admin/providers', label: 'Providers' },
  { to: '/console/admin/vouchers', label: 'Vouchers' },
  { to: '/console/admin/deliveries', label: 'Deliveries' },
  { to: '/console/admin/audit', label: 'Audit log' },
];

/**
 * The frame of every /console/admin page: the operator's navigation, then the page. Others are told the pages are for
 * operators and no admin API call is made; an operator whose rights end while the page is open gets the API's 403, which
 * ErrorNote words the same way.
 */
export function OperatorLayout() {
  const session = useSession();
  if (!session.data?.user.operator) {
    return (
      <>
        <h1>Operator pages</h1>
        <p role="alert" className="error">
          {OPERATORS_ONLY}
        </p>
      </>
    );
  }
  return (
    <>
      <NavLinks label="Operator" links={OPERATOR_LINKS} className="subnav" listClassName="tabs" />
      <Outlet />
    </>
  );
}
