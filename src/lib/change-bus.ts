/**
 * Tells every gateway process that cached state changed (a key revoked, a model edited), so each drops its copy at once.
 * Topics are short names (`keys`, `catalog`, `balance`); the payload is an id or empty. The implementations (one process,
 * database, Redis) live in storage/change-bus.ts; features know only this interface.
 */
export interface ChangeBus {
  publish(topic: string, id: string): Promise<void>;
  subscribe(handler: (topic: string, id: string) => void): void;
  close(): Promise<void>;
}
