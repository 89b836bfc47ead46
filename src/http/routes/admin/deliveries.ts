import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { TaskDelivery } from '../../../features/tasks/task.ts';
import type { WebhookDeliveriesService } from '../../../features/webhooks/deliveries-service.ts';
import { adminActor } from '../../actors.ts';

/** A webhook delivery attempt as the operator sees it. */
export const deliveryView = (delivery: TaskDelivery) => ({ ...delivery, object: 'delivery' as const, at: new Date(delivery.at).toISOString() });

/** GET /admin/v1/deliveries?taskId=, GET /admin/v1/deliveries/:id and POST /admin/v1/deliveries/:id/retry (DESIGN §4, §11). */
export function registerDeliveryRoutes(app: FastifyInstance, deliveries: WebhookDeliveriesService): void {
  app.get('/admin/v1/deliveries', async (request) => {
    const { taskId } = parseOrThrow(z.object({ taskId: z.string().min(1) }), request.query);
    return { object: 'list', data: (await deliveries.list(taskId)).map(deliveryView), next_cursor: null };
  });

  app.get('/admin/v1/deliveries/:id', async (request) => {
    const { id } = request.params as { id: string };
    return deliveryView(await deliveries.get(id));
  });

  app.post('/admin/v1/deliveries/:id/retry', async (request) => {
    const { id } = request.params as { id: string };
    const { delivery, queuedAt } = await deliveries.retry(adminActor(request), id);
    return { id: delivery.id, object: 'delivery.retry', taskId: delivery.taskId, queued: true, runAt: new Date(queuedAt).toISOString() };
  });
}
