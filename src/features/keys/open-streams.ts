/** The streams being answered right now, by the hash of the API key that opened them, so a revocation can cut them at once. */
export class OpenStreams {
  private readonly byKey = new Map<string, Set<AbortController>>();

  /** Tracks one stream; the returned function forgets it (call it when the stream ends). */
  track(keyHash: string, controller: AbortController): () => void {
    let streams = this.byKey.get(keyHash);
    if (!streams) this.byKey.set(keyHash, (streams = new Set()));
    streams.add(controller);
    return () => {
      streams.delete(controller);
      if (streams.size === 0 && this.byKey.get(keyHash) === streams) this.byKey.delete(keyHash);
    };
  }

  has(keyHash: string): boolean {
    return this.byKey.has(keyHash);
  }

  /** Aborts every stream of the key with `reason`; the relays still book what was produced (in their `finally`). */
  cut(keyHash: string, reason: Error): number {
    const streams = [...(this.byKey.get(keyHash) ?? [])];
    for (const controller of streams) controller.abort(reason);
    return streams.length;
  }
}
