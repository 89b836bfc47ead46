import { EventEmitter } from 'node:events';
import { Redis } from 'ioredis';

/**
 * Tells every gateway process that cached state changed (a key revoked, a model edited), so each drops its copy at once.
 * Topics are short names (`keys`, `catalog`, `balance`); the payload is an id or empty.
 */
export interface ChangeBus {
  publish(topic: string, id: string): Promise<void>;
  subscribe(handler: (topic: string, id: string) => void): void;
  close(): Promise<void>;
}

/** One process: changes are seen by this process only. */
export class LocalChangeBus implements ChangeBus {
  private readonly emitter = new EventEmitter();
  async publish(topic: string, id: string): Promise<void> {
    this.emitter.emit('change', topic, id);
  }
  subscribe(handler: (topic: string, id: string) => void): void {
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

  private constructor(url: string, prefix: string) {
    this.publisher = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    this.subscriber = new Redis(url, { lazyConnect: true });
    this.channel = `${prefix}changes`;
  }

  static async connect(url: string, prefix: string): Promise<RedisChangeBus> {
    const bus = new RedisChangeBus(url, prefix);
    await Promise.all([bus.publisher.connect(), bus.subscriber.connect()]);
    await bus.subscriber.subscribe(bus.channel);
    bus.subscriber.on('message', (_channel: string, message: string) => {
      const separator = message.indexOf(':');
      void bus.local.publish(message.slice(0, separator), message.slice(separator + 1));
    });
    return bus;
  }

  async publish(topic: string, id: string): Promise<void> {
    // Apply locally first: the caller's own next request must already see the change.
    await this.local.publish(topic, id);
    await this.publisher.publish(this.channel, `${topic}:${id}`);
  }

  subscribe(handler: (topic: string, id: string) => void): void {
    this.local.subscribe(handler);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.subscriber.disconnect();
    this.publisher.disconnect();
  }
}
