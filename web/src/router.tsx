import { createRootRoute, createRoute, createRouter, Link, Outlet, redirect } from '@tanstack/react-router';
import { queryClient } from './api/query-client.ts';
import { sessionQuery } from './api/session.ts';
import { ConsoleLayout } from './components/console-layout.tsx';
import { OperatorLayout } from './components/admin/operator-layout.tsx';
import { AdminAuditPage } from './routes/console/admin/audit.tsx';
import { AdminDeliveriesPage } from './routes/console/admin/deliveries.tsx';
import { AdminKeysPage } from './routes/console/admin/keys.tsx';
import { AdminModelsPage } from './routes/console/admin/models.tsx';
import { AdminOrgPage } from './routes/console/admin/org.tsx';
import { AdminOrgsPage } from './routes/console/admin/orgs.tsx';
import { AdminProvidersPage } from './routes/console/admin/providers.tsx';
import { AdminUserPage } from './routes/console/admin/user.tsx';
import { AdminUsersPage } from './routes/console/admin/users.tsx';
import { AdminVouchersPage } from './routes/console/admin/vouchers.tsx';
import { AssistantsPage } from './routes/console/assistants.tsx';
import { AssistantPage } from './routes/assistant-page.tsx';
import { BillingPage } from './routes/console/billing.tsx';
import { BotsPage } from './routes/console/bots.tsx';
import { KeysPage } from './routes/console/keys.tsx';
import { KnowledgePage } from './routes/console/knowledge.tsx';
import { OrgApiPage } from './routes/console/org-api.tsx';
import { OrgPage } from './routes/console/org.tsx';
import { OverviewPage } from './routes/console/overview.tsx';
import { RequestsPage } from './routes/console/requests.tsx';
import { TasksPage } from './routes/console/tasks.tsx';
import { UsagePage } from './routes/console/usage.tsx';
import { ConfirmEmailPage } from './routes/confirm-email.tsx';
import { InvitePage } from './routes/invite.tsx';
import { LoginPage } from './routes/login.tsx';
import { ResetPage } from './routes/reset.tsx';
import { SignupPage } from './routes/signup.tsx';
import { StorefrontPage } from './routes/storefront.tsx';

/** The app's pages at DESIGN §11's paths; the gateway serves index.html for each of them. */
const root = createRootRoute({
  component: () => (
    <>
      <a href="#main" className="skip">
        Skip to content
      </a>
      <Outlet />
    </>
  ),
  notFoundComponent: () => (
    <main id="main" className="narrow">
      <h1>Page not found</h1>
      <p>
        <Link to="/">Models and prices</Link> · <Link to="/console">Console</Link>
      </p>
    </main>
  ),
});

const login = createRoute({
  getParentRoute: () => root,
  path: '/login',
  component: LoginPage,
  validateSearch: (search: Record<string, unknown>): { next?: string } => (typeof search.next === 'string' ? { next: search.next } : {}),
});
const storefront = createRoute({ getParentRoute: () => root, path: '/', component: StorefrontPage });
const signup = createRoute({ getParentRoute: () => root, path: '/signup', component: SignupPage });
const invite = createRoute({ getParentRoute: () => root, path: '/invite/$token', component: InvitePage });
const reset = createRoute({ getParentRoute: () => root, path: '/reset/$token', component: ResetPage });
const confirmEmail = createRoute({ getParentRoute: () => root, path: '/confirm-email/$token', component: ConfirmEmailPage });
const assistantPage = createRoute({ getParentRoute: () => root, path: '/a/$mention', component: AssistantPage });

const consoleRoot = createRoute({
  getParentRoute: () => root,
  path: '/console',
  component: ConsoleLayout,
  // Signed-out visitors sign in first, then come back to the page they asked for.
  beforeLoad: async ({ location }) => {
    const session = await queryClient.ensureQueryData(sessionQuery);
    if (!session) throw redirect({ to: '/login', search: { next: location.pathname } });
  },
});
const overview = createRoute({ getParentRoute: () => consoleRoot, path: '/', component: OverviewPage });
const keys = createRoute({ getParentRoute: () => consoleRoot, path: '/keys', component: KeysPage });
const usage = createRoute({ getParentRoute: () => consoleRoot, path: '/usage', component: UsagePage });
const requests = createRoute({ getParentRoute: () => consoleRoot, path: '/requests', component: RequestsPage });
const billing = createRoute({ getParentRoute: () => consoleRoot, path: '/billing', component: BillingPage });
const bots = createRoute({ getParentRoute: () => consoleRoot, path: '/bots', component: BotsPage });
const assistants = createRoute({ getParentRoute: () => consoleRoot, path: '/assistants', component: AssistantsPage });
const knowledge = createRoute({ getParentRoute: () => consoleRoot, path: '/knowledge', component: KnowledgePage });
const tasks = createRoute({ getParentRoute: () => consoleRoot, path: '/tasks', component: TasksPage });
const org = createRoute({ getParentRoute: () => consoleRoot, path: '/orgs/$id', component: OrgPage });

// The operator pages (DESIGN §11): one layout with the operator's navigation; others are told the pages are for operators.
const admin = createRoute({ getParentRoute: () => consoleRoot, path: '/admin', component: OperatorLayout });
const adminIndex = createRoute({
  getParentRoute: () => admin,
  path: '/',
  beforeLoad: () => {
    throw redirect({ to: '/console/admin/users' });
  },
});
const adminUsers = createRoute({ getParentRoute: () => admin, path: '/users', component: AdminUsersPage });
const adminUser = createRoute({ getParentRoute: () => admin, path: '/users/$id', component: AdminUserPage });
const adminOrgs = createRoute({ getParentRoute: () => admin, path: '/orgs', component: AdminOrgsPage });
const adminOrg = createRoute({ getParentRoute: () => admin, path: '/orgs/$id', component: AdminOrgPage });
const adminKeys = createRoute({ getParentRoute: () => admin, path: '/keys', component: AdminKeysPage });
const adminModels = createRoute({ getParentRoute: () => admin, path: '/models', component: AdminModelsPage });
const adminProviders = createRoute({ getParentRoute: () => admin, path: '/providers', component: AdminProvidersPage });
const adminVouchers = createRoute({ getParentRoute: () => admin, path: '/vouchers', component: AdminVouchersPage });
const adminDeliveries = createRoute({ getParentRoute: () => admin, path: '/deliveries', component: AdminDeliveriesPage });
const adminAudit = createRoute({ getParentRoute: () => admin, path: '/audit', component: AdminAuditPage });
const orgApi = createRoute({ getParentRoute: () => consoleRoot, path: '/orgs/$id/api', component: OrgApiPage });

const routeTree = root.addChildren([
  storefront,
  login,
  signup,
  invite,
  reset,
  confirmEmail,
  assistantPage,
  consoleRoot.addChildren([
    overview,
    keys,
    usage,
    requests,
    billing,
    assistants,
    knowledge,
    bots,
    tasks,
    org,
    orgApi,
    admin.addChildren([adminIndex, adminUsers, adminUser, adminOrgs, adminOrg, adminKeys, adminModels, adminProviders, adminVouchers, adminDeliveries, adminAudit]),
  ]),
]);

export const router = createRouter({ routeTree, defaultPreload: 'intent' });

declare module '@tanstack/react-router' {
  interface Register {
    router: typeof router;
  }
}
