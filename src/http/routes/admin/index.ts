import type { FastifyInstance } from 'fastify';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import type { CatalogService } from '../../../features/catalog/catalog-service.ts';
import type { ChatbotService } from '../../../features/chatbot/chatbot-service.ts';
import type { KeysService } from '../../../features/keys/keys-service.ts';
import type { TasksService } from '../../../features/tasks/tasks-service.ts';
import type { Clock } from '../../../lib/clock.ts';
import { registerAccountRoutes } from './accounts.ts';
import { registerCatalogRoutes } from './catalog.ts';
import { registerKeyRoutes } from './keys.ts';
import { registerVoucherRoutes } from './vouchers.ts';
import { registerUserRoutes } from './users.ts';
import { registerOrgRoutes } from './orgs.ts';
import { registerAuditRoutes } from './audit.ts';
import type { DirectoryService } from '../../../features/accounts/directory-service.ts';
import type { VouchersService } from '../../../features/vouchers/vouchers-service.ts';
import type { AuditService } from '../../../features/audit/audit-service.ts';
import type { PasswordResetService } from '../../../features/accounts/password-reset-service.ts';
import { registerPasswordResetRoute } from './password-reset.ts';

/** The services the admin API is a door onto (the CLI and the management API call the same methods). */
export interface AdminServices {
  accounts: AccountsService;
  keys: KeysService;
  catalog: CatalogService;
  chatbot: ChatbotService;
  tasks: Pick<TasksService, 'deliveries'>;
  vouchers: VouchersService;
  audit: AuditService;
  directory: DirectoryService;
  passwordReset: PasswordResetService;
  clock: Clock;
}

/** The admin API under /admin/v1, guarded by the admin token. */
export function registerAdminRoutes(app: FastifyInstance, services: AdminServices): void {
  void app.register(
    async (admin) => {
      admin.addHook('onRoute', (route) => {
        route.config = { ...(route.config ?? {}), auth: 'admin', name: `admin ${route.method} ${route.url}` };
      });
      registerAccountRoutes(admin, services);
      registerKeyRoutes(admin, services);
      registerCatalogRoutes(admin, services);
      registerVoucherRoutes(admin, services);
      registerUserRoutes(admin, services.directory);
      registerOrgRoutes(admin, services.directory);
      registerAuditRoutes(admin, services.audit);
      registerPasswordResetRoute(admin, services.passwordReset);
    },
  );
}
