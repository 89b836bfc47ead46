import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';
import type { LatestDeliveriesQuery, LatestDelivery, TaskDelivery, TasksRepository } from '../tasks/task.ts';

const deliveryNotFound = (id: string): GatewayError => new GatewayError('not_found', `Delivery '${id}' does not exist.`);

/**
 * Task webhook deliveries as the operator handles them (admin API, CLI, the console's deliveries page): the attempts of a task,
 * and a retry of one that failed for good — a new delivery job at once, with the usual retries after it (webhook-dispatcher.ts),
 * signed afresh with the creating key. Audited.
 */
export class WebhookDeliveriesService {
  constructor(
    private readonly repository: Pick<TasksRepository, 'get' | 'deliveries' | 'delivery' | 'requeueWebhook' | 'latestDeliveries'>,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** A task's delivery attempts, oldest first. */
  list(taskId: string): Promise<TaskDelivery[]> {
    return this.repository.deliveries(taskId);
  }

  /** Each task's latest attempt, newest first, with where its webhook stands: the operator's list of what needs attention. */
  latest(query: LatestDeliveriesQuery): Promise<{ deliveries: LatestDelivery[]; nextCursor: string | undefined }> {
    return this.repository.latestDeliveries(query);
  }

  async get(id: string): Promise<TaskDelivery> {
    const delivery = await this.repository.delivery(id);
    if (!delivery) throw deliveryNotFound(id);
    return delivery;
  }

  /**
   * Queues the task of a failed delivery for delivery again. 409 when the task was delivered since, when a delivery is still
   * queued (its automatic retries have not run out), or when the signing key is gone (the receiver answered 410 Gone).
   */
  async retry(actor: Actor, deliveryId: string): Promise<{ delivery: TaskDelivery; queuedAt: number }> {
    const delivery = await this.get(deliveryId);
    const task = await this.repository.get(delivery.taskId);
    if (!task?.webhookUrl) throw deliveryNotFound(deliveryId);
    const attempts = await this.repository.deliveries(task.id);
    if (delivery.status === 'delivered' || attempts.some((attempt) => attempt.status === 'delivered')) {
      throw new GatewayError('conflict', `The webhook of task '${task.id}' was delivered; there is nothing to retry.`, { codeA: 'already_delivered' });
    }
    if (task.webhookSecret === null) {
      throw new GatewayError('conflict', `The webhook of task '${task.id}' cannot be signed any more: its receiver answered 410 Gone, and the signing key was erased.`, { codeA: 'delivery_not_retryable' });
    }
    const now = this.clock.now();
    if (!(await this.repository.requeueWebhook(task.id, now))) {
      throw new GatewayError('conflict', `A delivery of task '${task.id}' is already queued; its retries run on their own.`, { codeA: 'delivery_queued' });
    }
    await this.audit.record(
      actor,
      'delivery.retry',
      { type: 'delivery', id: delivery.id },
      {
        before: { taskId: task.id, status: delivery.status, attempt: delivery.attempt, httpStatus: delivery.httpStatus, error: delivery.error },
        after: { taskId: task.id, status: 'queued', url: task.webhookUrl },
        ...(task.payer.type === 'org' ? { orgId: task.payer.id } : {}),
      },
    );
    return { delivery, queuedAt: now };
  }
}
