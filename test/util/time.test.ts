import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rfc3339 } from '../../src/util/time.js';

test('rfc3339 writes whole seconds as metav1.Time does, whatever second came before', () => {
  const t = Date.parse('2026-11-30T04:00:00.000Z');
  assert.equal(rfc3339(t), '2026-11-30T04:00:00Z');
  assert.equal(rfc3339(t + 999), '2026-11-30T04:00:00Z');
  assert.equal(rfc3339(t + 1000), '2026-11-30T04:00:01Z');
  assert.equal(rfc3339(t - 1), '2026-11-30T03:59:59Z');
  assert.equal(rfc3339(t + 500), '2026-11-30T04:00:00Z');
});
