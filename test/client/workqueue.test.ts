// The work queue's metrics, as client-go counts them: an add per key added (not per time it is
// handed out), the wait from the add to a worker, and the work until done.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkQueue } from '../../src/client/workqueue.js';
import { FakeClock } from '../../src/util/clock.js';

test('counts a key re-added while being worked on once, and times its wait and its work', async () => {
  const clock = new FakeClock(0);
  const q = new WorkQueue<string>(clock);
  const seen = { added: 0, waits: [] as number[], works: [] as number[], retries: 0 };
  q.instrument({ added: () => seen.added++, started: (ms) => seen.waits.push(ms), finished: (ms) => seen.works.push(ms), retried: () => seen.retries++ });
  q.add('a');
  await clock.advance(5);
  assert.equal(await q.get(), 'a');
  q.add('a');
  q.add('a');
  await clock.advance(20);
  assert.deepEqual(q.inFlightSince(), [5]);
  q.done('a');
  assert.equal(await q.get(), 'a', 'handed out again after done');
  await clock.advance(3);
  q.done('a');
  assert.equal(seen.added, 2, 'the first add, and one while processing');
  assert.deepEqual(seen.waits, [5, 20]);
  assert.deepEqual(seen.works, [20, 3]);
  q.addRateLimited('a');
  assert.equal(seen.retries, 1);
  assert.equal(q.length, 0);
  q.shutdown();
});
