import type { Clock } from '../../lib/clock.ts';

/** A key's `last_used_at` is written at most this often, so a busy key costs no write per request. */
const WRITE_EVERY_MS = 60_000;
const TRACKED_LIMIT = 100_000;

/**
 * Notes when keys are used, off the request path: the first use in a minute writes (not awaited); later ones in that minute only
 * update memory, which this process's views read. Other processes' views see the time to within a minute.
 */
export class LastUsedRecorder {
  /** Per key: when it was last used here, and when that was last written. */
  private readonly seen = new Map<string, { usedAt: number; writtenAt: number }>();
  private readonly writes = new Set<Promise<void>>();

  constructor(
    private readonly write: (ids: readonly string[], at: number) => Promise<void>,
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  touch(keyId: string): void {
    const now = this.clock.now();
    const entry = this.seen.get(keyId);
    if (entry && now - entry.writtenAt < WRITE_EVERY_MS) {
      entry.usedAt = Math.max(entry.usedAt, now);
      return;
    }
    if (!entry && this.seen.size >= TRACKED_LIMIT) this.seen.clear();
    this.seen.set(keyId, { usedAt: now, writtenAt: now });
    const writing = this.write([keyId], now).catch(this.onError);
    this.writes.add(writing);
    void writing.finally(() => this.writes.delete(writing));
  }

  /** The later of the stored time and this process's last use. */
  lastUsedAt(keyId: string, stored: number | null): number | null {
    const used = this.seen.get(keyId)?.usedAt;
    if (used === undefined) return stored;
    return stored === null ? used : Math.max(stored, used);
  }

  /** Waits for the writes under way (a clean stop). */
  async settle(): Promise<void> {
    await Promise.all([...this.writes]);
  }
}
