import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { trimMalloc } from '@tollgate/malloc-trim';

/**
 * When to hand memory back. Under load V8 lets the old generation grow up to four times what survived its last full
 * collection before it collects again, and it keeps that heap until the next one: after a burst, RSS stays high for as
 * long as traffic keeps trickling in (or for minutes, if none does). A full collection hands it back — but it stops the
 * event loop for as long as it marks (tens of milliseconds), so it runs only when little is being served:
 *
 * - **traffic paused**: no request answered for `quietTicks` ticks since requests were last answered;
 * - **traffic fell**: the last tick answered at most a quarter of the busiest tick since the last collection, and the heap
 *   is at least half again what it was right after that collection (so a steady trickle never collects twice).
 *
 * The decision is pure (`tick`, given what was answered and the heap's size) so it is tested without timers or a heap.
 */
export class HeapReturner {
  #seen: number;
  #collectedAt: number;
  #quietFor = 0;
  #busiestTick = 0;
  #heapAfterCollection: number;

  constructor(
    requests: number,
    heapBytes: number,
    private readonly quietTicks: number,
  ) {
    this.#seen = requests;
    this.#collectedAt = requests;
    this.#heapAfterCollection = heapBytes;
  }

  /** Called once a tick with the answered-requests counter and the heap's committed size: true means collect now. */
  tick(requests: number, heapBytes: number): boolean {
    const answered = requests - this.#seen;
    this.#seen = requests;
    this.#quietFor = answered === 0 ? this.#quietFor + 1 : 0;
    const paused = this.#quietFor >= this.quietTicks && requests !== this.#collectedAt;
    const fell = this.#busiestTick > 0 && answered * 4 <= this.#busiestTick && heapBytes >= this.#heapAfterCollection * 1.5;
    this.#busiestTick = Math.max(this.#busiestTick, answered);
    return paused || fell;
  }

  /** After a collection: the heap it left is the new reference, and the busiest tick starts over. */
  collected(requests: number, heapBytes: number): void {
    this.#collectedAt = requests;
    this.#heapAfterCollection = heapBytes;
    this.#busiestTick = 0;
    this.#quietFor = 0;
  }
}

/** `--expose-gc`'s function. V8 12 and later read an options object; V8 11 (Node 20) takes none. */
type ExposedGc = (options?: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * The full collection that hands memory back, for this process's V8 (`process.versions.v8`). From V8 12 (Node 22) a plain
 * `gc()` keeps the pages it empties in a pool, and the pool goes back to the system only when V8's memory reducer runs,
 * which it did not do once load stopped (it kept reading the allocation rate of the load as current): after 10 s of
 * saturation the gateway stayed at 262–340 MB for the next minute on Node 24, against 120 MB on Node 20. The
 * `last-resort` flavour collects until nothing more is freed, with the flag that reduces the footprint, and releases the
 * pool at once (a 190 MB heap of garbage: 58 MB right after it on Node 22, 24 and 26, 192 MB after a plain `gc()`). On
 * V8 11 that option object is not read the same way (nothing was handed back), and the plain `gc()` hands the pages back
 * by itself, so it stays.
 *
 * `compact` moves every live object of the old generation into as few pages as hold it (V8's
 * `--compact-on-every-full-gc`, switched on for this one collection and off again). Without it V8 moves objects only off
 * pages that are mostly empty, at most a few MB a collection, and a page with one live object stays committed. A heap of
 * 24 MB live left among 100 MB of garbage (a quarter of its objects kept): 99 MB committed after the collection on Node 20,
 * 41 MB compacted; on Node 24 the last-resort flavour already moves most of it (35–36 MB, once 86), compacted 26–27 MB.
 * After the benchmark's load on Node 20, the gateway's heap: 62 MB committed for 35 MB live, and 37 MB compacted. It
 * copies everything live and keeps the copy beside the old pages until the collection ends (RSS rose by up to the live
 * heap for a moment), and on Node 20 it pauses about twice as long (~75 against ~40 ms in the gateway), so the caller
 * asks for it only when no request is in flight.
 */
export function handBackMemory(collect: ExposedGc, compact: boolean, v8Version = process.versions.v8): void {
  if (compact) setFlagsFromString('--compact-on-every-full-gc');
  try {
    if (Number.parseInt(v8Version, 10) >= 12) collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    else collect();
  } finally {
    if (compact) setFlagsFromString('--no-compact-on-every-full-gc');
  }
}

/** What the gateway counts for the idle collector (the observability plugin writes it): requests begun and answered. */
export interface Activity {
  started: number;
  /** Answered: a response finished or cut off. `started - requests` are in flight. */
  requests: number;
}

/**
 * Runs `HeapReturner` once a second when the process has `--expose-gc` (npm start and the container pass it); without
 * it, a no-op. `activity` is read, not written. The collection compacts the heap when no request is in flight at that
 * tick (`handBackMemory`): with streams held open it would copy their live objects and raise the RSS they are measured
 * by, for a moment, and it would pause them longer. Returns the function that stops it.
 *
 * After each collection, glibc's `malloc_trim(0)` (native/malloc-trim, where it was built): the load also grew the C
 * heap (glibc's main arena: V8's compilers, the HTTP parser, sockets) from ~7 MB to 28–42 MB, and free() gives back only
 * the top of it; the trim releases the free pages below memory still in use. In the benchmark's sequence it took 2–12 ms
 * (beside the collection's tens) and lowered the RSS with 1,000 streams held after the earlier load by ~10 MB.
 */
export function startIdleCollector(activity: Activity, tickMs = 1_000, quietTicks = 5, trim = trimMalloc, handBack = handBackMemory): () => void {
  const collect = (globalThis as { gc?: ExposedGc }).gc;
  if (!collect) return () => {};
  const heapBytes = (): number => getHeapStatistics().total_heap_size;
  const returner = new HeapReturner(activity.requests, heapBytes(), quietTicks);
  const timer = setInterval(() => {
    if (!returner.tick(activity.requests, heapBytes())) return;
    handBack(collect, activity.started === activity.requests);
    trim?.();
    returner.collected(activity.requests, heapBytes());
  }, tickMs);
  timer.unref();
  return () => clearInterval(timer);
}
