import assert from 'node:assert/strict';
import { test } from 'node:test';
import { COOL_AFTER_FAILURES, COOL_BASE_MS, COOL_MAX_MS, ChannelHealth } from './channel-health.ts';

const NOW = 5_000_000;

test('healthy → cooling after failures in a row → probing (one probe) → healthy on its success', () => {
  const health = new ChannelHealth();
  for (let index = 1; index < COOL_AFTER_FAILURES; index++) health.failed(NOW, false, undefined);
  assert.equal(health.view(NOW).state, 'healthy', 'fewer failures than the threshold');
  health.succeeded(10);
  for (let index = 1; index < COOL_AFTER_FAILURES; index++) health.failed(NOW, false, undefined);
  assert.equal(health.view(NOW).state, 'healthy', 'a success in between starts the count again');
  health.failed(NOW, false, undefined);
  assert.equal(health.view(NOW).state, 'cooling');
  assert.equal(health.available(NOW + COOL_BASE_MS - 1), false);
  assert.equal(health.available(NOW + COOL_BASE_MS), true);
  assert.equal(health.view(NOW + COOL_BASE_MS).state, 'probing');
  health.chosen();
  assert.equal(health.available(NOW + COOL_BASE_MS), false, 'one probe at a time');
  health.succeeded(12);
  assert.equal(health.view(NOW + COOL_BASE_MS).state, 'healthy');
});

test('each failed probe doubles the cool-down, up to the cap; a 429 cools at once for at least its retry-after', () => {
  const health = new ChannelHealth();
  let now = NOW;
  for (let index = 0; index < COOL_AFTER_FAILURES; index++) health.failed(now, false, undefined);
  const lengths: number[] = [];
  for (let round = 0; round < 8; round++) {
    const until = health.coolingUntil(now);
    lengths.push(until - now);
    now = until;
    assert.equal(health.available(now), true);
    health.chosen();
    health.failed(now, false, undefined);
  }
  assert.deepEqual(lengths, [1, 2, 4, 8, 16, 32, 60, 60].map((seconds) => Math.min(seconds * COOL_BASE_MS, COOL_MAX_MS)));

  const limited = new ChannelHealth();
  limited.failed(NOW, true, 30_000);
  assert.deepEqual([limited.view(NOW).state, limited.coolingUntil(NOW), limited.rateLimited], ['cooling', NOW + 30_000, true]);
  const guessed = new ChannelHealth();
  guessed.failed(NOW, true, undefined);
  assert.deepEqual([guessed.coolingUntil(NOW), guessed.rateLimited], [NOW + COOL_BASE_MS, false], 'no retry-after: our own back-off, not a vendor order');
});

test('error rate and latency percentiles over the recent window', () => {
  const health = new ChannelHealth();
  for (let index = 1; index <= 100; index++) {
    health.chosen();
    health.succeeded(index);
  }
  health.chosen();
  health.failed(NOW, false, undefined);
  const view = health.view(NOW);
  assert.deepEqual([view.requests, view.errors, view.errorRate, view.latencyMs.p50, view.latencyMs.p99], [101, 1, 0.0099, 50, 99]);
});
