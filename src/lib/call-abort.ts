/**
 * What stops a call: the part of AbortSignal that the gateway's own code reads (http-client's handlers, channel failover,
 * task waits). A real AbortSignal is one, so callers holding one pass it as it is.
 */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** What can be stopped: an AbortController, or a CallAbort. */
export interface Abortable {
  readonly signal: CallSignal;
  abort(reason?: unknown): void;
}

/**
 * A controller and its signal in one small object, for the call a request makes while its client waits (the streams'
 * client-gone abort). As on an EventTarget, a listener added twice is held once; listeners run once, in the order added,
 * when it is aborted; the reason defaults to the AbortError DOMException AbortController uses.
 *
 * Why not AbortController: on Node 20, every AbortSignal gets a hidden class of its own (node builds it as an EventTarget
 * and then sets its prototype). Those classes and their descriptors live in V8's old generation, ~0.8 KB a signal, and the
 * young objects they touch are promoted with them: a streamed chat call grew the old generation by ~2.5 KB, ~1.1 KB with
 * this (bench/RESULTS.md, twenty-second session). Node 22 and later share one class; this costs less there too (no
 * EventTarget, no event maps). It reaches only code of the gateway's own that takes a CallSignal, never a Node or undici
 * API that wants a real AbortSignal (those get an AbortController).
 */
export class CallAbort implements Abortable, CallSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  get signal(): CallSignal {
    return this;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    this.listeners ??= [];
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const index = listeners.indexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }

  abort(reason: unknown = new DOMException('This operation was aborted', 'AbortError')): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    for (const listener of listeners ?? []) listener();
  }
}
