import type { Abortable } from '../../lib/call-abort.ts';
import { ReleasingMap } from '../../lib/releasing-map.ts';

/** The streams being answered right now, by the hash of the API key that opened them, so a revocation can cut them at once. */
export class OpenStreams {
  /** Each key's streams by a number of their own: a stream's controller is let go when it ends (see ReleasingMap). */
  private readonly byKey = new Map<string, ReleasingMap<number, Abortable>>();
  private tracked = 0;

  /** Tracks one stream; the returned function forgets it (call it when the stream ends). */
  track(keyHash: string, controller: Abortable): () => void {
    let streams = this.byKey.get(keyHash);
    if (!streams) this.byKey.set(keyHash, (streams = new ReleasingMap()));
    const number = ++this.tracked;
    streams.set(number, controller);
    return () => {
      streams.delete(number);
      if (streams.size === 0 && this.byKey.get(keyHash) === streams) this.byKey.delete(keyHash);
    };
  }

  has(keyHash: string): boolean {
    return this.byKey.has(keyHash);
  }

  /** Aborts every stream of the key with `reason`; the relays still book what was produced (in their `finally`). */
  cut(keyHash: string, reason: Error): number {
    const streams = [...(this.byKey.get(keyHash)?.values() ?? [])];
    for (const controller of streams) controller.abort(reason);
    return streams.length;
  }
}
