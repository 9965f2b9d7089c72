import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomString } from '../../src/util/random.js';

describe('randomString', () => {
  it('draws only from the alphabet, every character about equally often', () => {
    const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
    const counts = new Map<string, number>();
    const n = 27_000;
    // Enough draws to walk through the 4 KiB pool several times.
    for (let i = 0; i < n / 5; i++) {
      const s = randomString(alphabet, 5);
      assert.equal(s.length, 5);
      for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    }
    assert.deepEqual([...counts.keys()].sort(), [...alphabet].sort());
    // Each character expects 1000; a skew of b % 27 over raw bytes would give ~1,040 vs ~890.
    for (const [ch, c] of counts) assert.ok(c > 850 && c < 1150, `${ch} drawn ${c} times`);
  });
});
