import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CallAbort, type CallSignal } from './call-abort.ts';

describe('CallAbort', () => {
  test('is its own signal: not aborted until abort(), then aborted with the reason given', () => {
    const controller = new CallAbort();
    const signal: CallSignal = controller.signal;
    assert.equal(signal, controller);
    assert.equal(signal.aborted, false);
    assert.equal(signal.reason, undefined);
    const reason = new Error('key revoked');
    controller.abort(reason);
    assert.equal(signal.aborted, true);
    assert.equal(signal.reason, reason);
    controller.abort(new Error('later'));
    assert.equal(signal.reason, reason, 'a second abort changes nothing');
  });

  test("without a reason it is AbortController's: a DOMException named AbortError", () => {
    const controller = new CallAbort();
    controller.abort();
    const expected = new AbortController();
    expected.abort();
    assert.ok(controller.signal.reason instanceof DOMException);
    assert.equal((controller.signal.reason as DOMException).name, (expected.signal.reason as DOMException).name);
    assert.equal((controller.signal.reason as DOMException).message, (expected.signal.reason as DOMException).message);
  });

  test('runs each listener once, in the order added; a removed listener does not run; one added twice runs once', () => {
    const controller = new CallAbort();
    const calls: string[] = [];
    const first = (): void => void calls.push('first');
    const second = (): void => void calls.push('second');
    const removed = (): void => void calls.push('removed');
    const third = (): void => void calls.push('third');
    controller.signal.addEventListener('abort', first);
    controller.signal.addEventListener('abort', first);
    controller.signal.addEventListener('abort', second);
    controller.signal.addEventListener('abort', removed, { once: true });
    controller.signal.addEventListener('abort', third);
    controller.signal.removeEventListener('abort', removed);
    controller.abort();
    controller.abort();
    assert.deepEqual(calls, ['first', 'second', 'third']);
  });

  test('a single listener removed before the abort does not run; listeners see the signal already aborted', () => {
    const controller = new CallAbort();
    let ran = false;
    const listener = (): void => {
      ran = true;
    };
    controller.signal.addEventListener('abort', listener);
    controller.signal.removeEventListener('abort', listener);
    controller.abort();
    assert.equal(ran, false);

    const other = new CallAbort();
    let seen: unknown;
    other.signal.addEventListener('abort', () => {
      seen = other.signal.aborted && other.signal.reason;
    });
    other.abort('gone');
    assert.equal(seen, 'gone');
  });

  test('a listener added after the abort is not run (as with EventTarget, the abort event has passed)', () => {
    const controller = new CallAbort();
    controller.abort();
    let ran = false;
    controller.signal.addEventListener('abort', () => {
      ran = true;
    });
    assert.equal(ran, false);
  });

  test('an AbortController is Abortable too: both fit where the routes and the key revocation take one', () => {
    const takes = (controller: { signal: CallSignal; abort(reason?: unknown): void }): boolean => {
      controller.abort(new Error('cut'));
      return controller.signal.aborted;
    };
    assert.equal(takes(new AbortController()), true);
    assert.equal(takes(new CallAbort()), true);
  });
});
