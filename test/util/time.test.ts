import { test } from 'node:test';
import assert from 'node:assert/strict';
import { microTime, rfc3339 } from '../../src/util/time.js';

test('rfc3339 writes whole seconds as metav1.Time does, whatever second came before', () => {
  const t = Date.parse('2026-11-30T04:00:00.000Z');
  assert.equal(rfc3339(t), '2026-11-30T04:00:00Z');
  assert.equal(rfc3339(t + 999), '2026-11-30T04:00:00Z');
  assert.equal(rfc3339(t + 1000), '2026-11-30T04:00:01Z');
  assert.equal(rfc3339(t - 1), '2026-11-30T03:59:59Z');
  assert.equal(rfc3339(t + 500), '2026-11-30T04:00:00Z');
});

test('microTime: six digits of fraction, as metav1.MicroTime; a fraction of a millisecond gives the last three', () => {
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6) + 0.789), '2026-01-02T03:04:05.006789Z');
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 6)), '2026-01-02T03:04:05.006000Z');
  assert.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5)), '2026-01-02T03:04:05.000000Z');
});
