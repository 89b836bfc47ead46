import type { PushSource, Sink } from '../../lib/push-stream.ts';

/**
 * The rules of one dialect for relaying an upstream stream to a client. A rule set is made per request (it keeps what
 * the charge needs: usage, text produced) and used by one `relayStream`.
 */
export interface RelayDialect<Event> {
  /** The whole SSE frame to send for an upstream event, or undefined to drop it. Pass-through frames should not be re-serialised. */
  frame(event: Event): string | undefined;
  /** Whether the relay stops after this event's frame (a vendor error inside the stream). */
  ends(event: Event): boolean;
  /** The frame that closes a stream the vendor finished (OpenAI's `[DONE]`); undefined for none. */
  finished(): string | undefined;
  /** Books the charge from what was seen; called exactly once, however the relay ends. */
  charge(): void;
}

/**
 * The one relay from an upstream stream to a client, pushed: each batch of events (what one read of the vendor's body
 * completed) goes out as one string of the frames the dialect makes of it, in the call that brought the batch. When it
 * ends for any reason — finished, vendor error, connection lost, a rule that throws (the frames made before it are still
 * sent), or the client gone (`close`) — it closes the upstream and books the charge once; then `after` runs (what must
 * be stored before the client sees the end), and only then does the client's sink hear the end or the failure. A charge
 * that throws fails a stream that would have ended well.
 */
export function relayStream<Event>(source: PushSource<readonly Event[]>, dialect: RelayDialect<Event>, after?: () => Promise<void>): PushSource<string> {
  return new Relay(source, dialect, after);
}

class Relay<Event> implements PushSource<string>, Sink<readonly Event[]> {
  private out: Sink<string> | undefined;
  /** Set once the relay has ended (charged); what it ended with, for a `close` that comes later. */
  private ended: Promise<void> | undefined;

  constructor(
    private readonly source: PushSource<readonly Event[]>,
    private readonly dialect: RelayDialect<Event>,
    private readonly after: (() => Promise<void>) | undefined,
  ) {}

  start(out: Sink<string>): void {
    this.out = out;
    this.source.start(this);
  }

  pause(): void {
    this.source.pause();
  }

  resume(): void {
    this.source.resume();
  }

  /** The client went away: the upstream is closed and the charge booked; the sink hears nothing more. */
  close(): Promise<void> {
    this.ended ??= this.finish(false, undefined);
    return this.ended;
  }

  next(events: readonly Event[]): void {
    if (this.ended) return;
    const { dialect } = this;
    let text = '';
    let ends = false;
    try {
      for (let index = 0; index < events.length && !ends; index++) {
        const event = events[index]!;
        const frame = dialect.frame(event);
        if (frame !== undefined) text += frame;
        ends = dialect.ends(event);
      }
    } catch (error) {
      if (text !== '') this.out!.next(text);
      this.conclude(true, error);
      return;
    }
    if (text !== '') this.out!.next(text);
    if (ends) this.conclude(false, undefined);
  }

  /** The vendor finished the stream: the dialect's closing frame, then the end. */
  end(): void {
    if (this.ended) return;
    let last: string | undefined;
    try {
      last = this.dialect.finished();
    } catch (error) {
      this.conclude(true, error);
      return;
    }
    if (last !== undefined) this.out!.next(last);
    this.conclude(false, undefined);
  }

  fail(error: unknown): void {
    if (!this.ended) this.conclude(true, error);
  }

  private conclude(failed: boolean, error: unknown): void {
    const out = this.out!;
    this.ended = this.finish(failed, error).then(
      () => out.end(),
      (thrown: unknown) => out.fail(thrown),
    );
  }

  /** Closes the upstream, books the charge, runs `after`; rejects with the failure the stream ends with, if any. */
  private finish(failed: boolean, error: unknown): Promise<void> {
    void this.source.close();
    let failure = failed;
    let reason = error;
    try {
      this.dialect.charge();
    } catch (thrown) {
      if (!failure) {
        failure = true;
        reason = thrown;
      }
    }
    const settle = (): Promise<void> => (failure ? Promise.reject(reason) : Promise.resolve());
    return this.after ? this.after().then(settle, settle) : settle();
  }
}
