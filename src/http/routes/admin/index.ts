import type { FastifyInstance } from 'fastify';
import type { Services } from '../../../app.ts';
import { registerAccountRoutes } from './accounts.ts';
import { registerCatalogRoutes } from './catalog.ts';
import { registerKeyRoutes } from './keys.ts';

/** The admin API under /admin/v1, guarded by the admin token. */
export function registerAdminRoutes(app: FastifyInstance, services: Services): void {
  void app.register(
    async (admin) => {
      admin.addHook('onRoute', (route) => {
        route.config = { ...(route.config ?? {}), auth: 'admin', name: `admin ${route.method} ${route.url}` };
      });
      registerAccountRoutes(admin, services);
      registerKeyRoutes(admin, services);
      registerCatalogRoutes(admin, services);
    },
  );
}
