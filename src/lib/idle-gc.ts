/**
 * After a burst of load V8 keeps the heap it grew to, and RSS stays high for minutes. When the process runs with
 * `--expose-gc` (npm start does), a full collection once traffic has paused for a few seconds hands that memory back.
 * `activity` is read, not written: it counts answered requests.
 */
export function startIdleCollector(activity: { requests: number }, quietMs = 5_000): () => void {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) return () => {};
  let seen = activity.requests;
  let collectedAt = activity.requests;
  const timer = setInterval(() => {
    const now = activity.requests;
    if (now === seen && now !== collectedAt) {
      collect();
      collectedAt = now;
    }
    seen = now;
  }, quietMs);
  timer.unref();
  return () => clearInterval(timer);
}
