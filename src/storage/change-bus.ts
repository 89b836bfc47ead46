import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import { isTopic, type ChangeBus, type ChangeHandler, type Topic } from '../lib/change-bus.ts';
import { newId } from '../lib/ids.ts';
import type { Database } from './schema.ts';

export { TOPICS, isTopic, type ChangeBus, type ChangeHandler, type Topic } from '../lib/change-bus.ts';

/** One process: changes are seen by this process only. */
export class LocalChangeBus implements ChangeBus {
  private readonly emitter = new EventEmitter();
  async publish(topic: Topic, id: string): Promise<void> {
    this.emitter.emit('change', topic, id);
  }
  subscribe(handler: ChangeHandler): void {
    this.emitter.on('change', handler);
  }
  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

/** Several processes: Redis pub/sub on one channel; the publishing process also hears its own message. */
export class RedisChangeBus implements ChangeBus {
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly channel: string;
  private readonly local = new LocalChangeBus();

  private constructor(RedisClient: typeof Redis, url: string, prefix: string, onError: (error: Error) => void) {
    // Offline commands fail at once instead of queueing: a Redis that is down must not hold up a request or a revocation.
    const options = { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (times: number) => Math.min(times * 200, 2_000) };
    this.publisher = new RedisClient(url, options);
    this.subscriber = new RedisClient(url, { ...options, enableOfflineQueue: true });
    this.channel = `${prefix}changes`;
    // ioredis reconnects by itself; without listeners its `error` events would end the process.
    this.publisher.on('error', onError);
    this.subscriber.on('error', onError);
  }

  /**
   * Connects in the background: a Redis that is down at start does not stop the gateway (DESIGN §14). Until it answers,
   * changes reach this process only, other processes' caches expire on their own, and readiness names redis.
   */
  static async connect(url: string, prefix: string, onError: (error: Error) => void = () => {}): Promise<RedisChangeBus> {
    // ioredis is loaded only where Redis is configured.
    const { Redis: RedisClient } = await import('ioredis');
    const bus = new RedisChangeBus(RedisClient, url, prefix, onError);
    bus.subscriber.on('message', (_channel: string, message: string) => {
      const separator = message.indexOf(':');
      const topic = message.slice(0, separator);
      if (isTopic(topic)) void bus.local.publish(topic, message.slice(separator + 1));
    });
    const ready = Promise.all([bus.publisher.connect(), bus.subscriber.connect().then(() => bus.subscriber.subscribe(bus.channel))]);
    // Wait briefly so a healthy Redis is subscribed before the first request; a dead one is left reconnecting.
    await Promise.race([ready.catch((error: Error) => onError(error)), new Promise((done) => setTimeout(done, 1_000).unref())]);
    return bus;
  }

  async publish(topic: Topic, id: string): Promise<void> {
    // Apply locally first: the caller's own next request must already see the change.
    await this.local.publish(topic, id);
    // Other processes miss this notice while Redis is down; their caches expire by themselves (keys within a minute).
    await this.publisher.publish(this.channel, `${topic}:${id}`).catch(() => undefined);
  }

  subscribe(handler: ChangeHandler): void {
    this.local.subscribe(handler);
  }

  async ping(): Promise<void> {
    await this.publisher.ping();
  }

  async close(): Promise<void> {
    await this.local.close();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}

/** How often a process looks for other processes' changes when they share only the database. */
const POLL_MS = 200;
/** Notices are read back this far, so one committed late by another process is still seen. */
const LOOK_BACK_MS = 10_000;
/** Notices older than this are deleted. */
const KEEP_MS = 3_600_000;

/**
 * Several processes on one database without Redis (gateways on PostgreSQL; a gateway and the `tollgate` CLI on one SQLite
 * file): changes are rows of the `changes` table, read back by every process every 200 ms. Slower than pub/sub, but a
 * revoked key still stops working everywhere within a fraction of a second.
 */
export class DatabaseChangeBus implements ChangeBus {
  private readonly local = new LocalChangeBus();
  private readonly seen = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(private readonly db: Kysely<Database>) {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
    this.timer.unref();
  }

  async publish(topic: Topic, id: string): Promise<void> {
    const notice = { id: newId('job'), topic, subject: id, at: Date.now() };
    this.seen.set(notice.id, notice.at);
    await this.local.publish(topic, id);
    await this.db.insertInto('changes').values(notice).execute();
  }

  subscribe(handler: ChangeHandler): void {
    this.local.subscribe(handler);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      const now = Date.now();
      const rows = await this.db.selectFrom('changes').select(['id', 'topic', 'subject', 'at']).where('at', '>', now - LOOK_BACK_MS).execute();
      for (const row of rows) {
        if (this.seen.has(row.id)) continue;
        this.seen.set(row.id, Number(row.at));
        if (isTopic(row.topic)) await this.local.publish(row.topic, row.subject);
      }
      for (const [id, at] of this.seen) if (at < now - LOOK_BACK_MS * 2) this.seen.delete(id);
      if (Math.random() < 0.01) await this.db.deleteFrom('changes').where('at', '<', now - KEEP_MS).execute();
    } catch {
      // The next poll tries again; a missed notice is also covered by the caches' own expiry.
    } finally {
      this.polling = false;
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.local.close();
  }
}
