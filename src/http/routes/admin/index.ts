import type { FastifyInstance } from 'fastify';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import type { CatalogService } from '../../../features/catalog/catalog-service.ts';
import type { BotIntegrationsService } from '../../../features/chatbot/bot-integrations-service.ts';
import type { KeysService } from '../../../features/keys/keys-service.ts';
import type { WebhookDeliveriesService } from '../../../features/webhooks/deliveries-service.ts';
import type { Clock } from '../../../lib/clock.ts';
import { registerAccountRoutes } from './accounts.ts';
import { registerCatalogRoutes, type ChannelHealthSource } from './catalog.ts';
import { registerKeyRoutes } from './keys.ts';
import { registerVoucherRoutes } from './vouchers.ts';
import { registerUserRoutes } from './users.ts';
import { registerOrgRoutes } from './orgs.ts';
import { registerAuditRoutes } from './audit.ts';
import { registerAdminBotRoutes } from './bots.ts';
import { registerDeliveryRoutes } from './deliveries.ts';
import type { DirectoryService } from '../../../features/accounts/directory-service.ts';
import type { OrgsService } from '../../../features/accounts/orgs-service.ts';
import type { VouchersService } from '../../../features/vouchers/vouchers-service.ts';
import type { AuditService } from '../../../features/audit/audit-service.ts';
import type { PaymentsService } from '../../../features/payments/payments-service.ts';
import { registerAdminPaymentRoutes } from './payments.ts';
import type { PasswordResetService } from '../../../features/accounts/password-reset-service.ts';
import { registerPasswordResetRoute } from './password-reset.ts';

/** The services the admin API is a door onto (the CLI and the management API call the same methods). */
export interface AdminServices {
  accounts: AccountsService;
  keys: KeysService;
  catalog: CatalogService;
  botIntegrations: BotIntegrationsService;
  deliveries: WebhookDeliveriesService;
  vouchers: VouchersService;
  payments: PaymentsService;
  audit: AuditService;
  directory: DirectoryService;
  orgs: OrgsService;
  passwordReset: PasswordResetService;
  /** Each provider channel's health in this process (the provider registry). */
  channelHealth: ChannelHealthSource;
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
      registerOrgRoutes(admin, services);
      registerAuditRoutes(admin, services.audit);
      registerAdminPaymentRoutes(admin, services.payments);
      registerAdminBotRoutes(admin, services.botIntegrations);
      registerDeliveryRoutes(admin, services.deliveries);
      registerPasswordResetRoute(admin, services.passwordReset);
    },
  );
}
