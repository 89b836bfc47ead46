/** What changed: API keys (payload: the key's hash), organisations (id), the model catalog (model id or empty), a balance. */
export const TOPICS = ['keys', 'orgs', 'catalog', 'balance'] as const;
export type Topic = (typeof TOPICS)[number];

/** Notices from other processes arrive as text; a topic this version does not know (a newer process's) is ignored. */
export const isTopic = (value: string): value is Topic => (TOPICS as readonly string[]).includes(value);

export type ChangeHandler = (topic: Topic, id: string) => void;

/**
 * Tells every gateway process that cached state changed (a key revoked, a model edited), so each drops its copy at once.
 * The payload is an id or empty. The implementations (one process, database, Redis) live in storage/change-bus.ts; features
 * know only this interface.
 */
export interface ChangeBus {
  publish(topic: Topic, id: string): Promise<void>;
  subscribe(handler: ChangeHandler): void;
  /** Readiness probe of a bus that has a server of its own (Redis). */
  ping?(): Promise<void>;
  close(): Promise<void>;
}
