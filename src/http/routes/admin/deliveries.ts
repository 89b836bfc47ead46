import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { DELIVERY_STATES, type TaskDelivery } from '../../../features/tasks/task.ts';
import type { WebhookDeliveriesService } from '../../../features/webhooks/deliveries-service.ts';
import { adminActor } from '../../actors.ts';
import { listOf, listQuery } from './admin-schemas.ts';

/** A webhook delivery attempt as the operator sees it. */
export const deliveryView = (delivery: TaskDelivery) => ({ ...delivery, object: 'delivery' as const, at: new Date(delivery.at).toISOString() });

/**
 * `?taskId=`: that task's attempts, oldest first (DESIGN §4). Without it: each task's latest attempt, newest first, with its
 * webhook's `state` (pending, failed, delivered), filtered by `state` and paged by cursor — the console's deliveries page.
 */
const deliveriesQuery = listQuery.omit({ query: true }).extend({ taskId: z.string().min(1).optional(), state: z.enum(DELIVERY_STATES).optional() });

/** GET /admin/v1/deliveries, GET /admin/v1/deliveries/:id and POST /admin/v1/deliveries/:id/retry (DESIGN §4, §11). */
export function registerDeliveryRoutes(app: FastifyInstance, deliveries: WebhookDeliveriesService): void {
  app.get('/admin/v1/deliveries', { config: { doc: { summary: "A task's webhook deliveries, or every task's latest one with its state", query: deliveriesQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(deliveriesQuery, request.query);
    if (query.taskId !== undefined) return { object: 'list', data: (await deliveries.list(query.taskId)).map(deliveryView), next_cursor: null };
    const page = await deliveries.latest({ limit: query.limit, ...(query.state ? { state: query.state } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) });
    return listOf(page.deliveries.map((delivery) => ({ ...deliveryView(delivery), state: delivery.state })), page.nextCursor);
  });

  app.get('/admin/v1/deliveries/:id', { config: { doc: { summary: 'One webhook delivery' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return deliveryView(await deliveries.get(id));
  });

  app.post('/admin/v1/deliveries/:id/retry', { config: { doc: { summary: 'Queue a failed webhook delivery again' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const { delivery, queuedAt } = await deliveries.retry(adminActor(request), id);
    return { id: delivery.id, object: 'delivery.retry', taskId: delivery.taskId, queued: true, runAt: new Date(queuedAt).toISOString() };
  });
}
