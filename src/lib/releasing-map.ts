/**
 * A Map for values that come and go with requests (a request's trace by its id, a stream's controller), which lets go of a
 * value as soon as it is deleted.
 *
 * V8 keeps a Map's entries in a hash table. Deleting leaves a hole; when holes and entries fill the table, `set` copies
 * the live entries into a new table, and the old one keeps its entries (an iterator may still be walking it) until a
 * full collection frees it. A long-lived Map sits in the old generation, and from then on so does each of its tables.
 * The young-generation collector takes every reference from the old generation as live, so each value that was in the
 * Map when one of its tables was replaced survives the scavenges until the next full collection — it is promoted, with
 * everything it references. The request log's open traces, held in a Map, took each call's resolution, route and ending
 * along; with this map (and node's allocation-site pretenuring off, as `npm start` runs it) a short call promotes ~0.7 KB
 * instead of ~1.1 KB (bench/RESULTS.md, twenty-first session).
 *
 * Here the Map holds a slot per key and `delete` empties the slot first: an old table keeps only an empty slot. Keys stay
 * in the old tables as they are, so they should be primitives (an id) or objects that live on anyway. Values are objects
 * (an empty slot is `undefined`).
 */
export class ReleasingMap<K, V extends object> {
  private readonly slots = new Map<K, { value: V | undefined }>();

  get size(): number {
    return this.slots.size;
  }

  get(key: K): V | undefined {
    return this.slots.get(key)?.value;
  }

  has(key: K): boolean {
    return this.slots.has(key);
  }

  set(key: K, value: V): void {
    const slot = this.slots.get(key);
    if (slot) slot.value = value;
    else this.slots.set(key, { value });
  }

  delete(key: K): boolean {
    const slot = this.slots.get(key);
    if (!slot) return false;
    slot.value = undefined;
    return this.slots.delete(key);
  }

  /** The values, in insertion order. */
  *values(): IterableIterator<V> {
    for (const slot of this.slots.values()) if (slot.value !== undefined) yield slot.value;
  }
}
