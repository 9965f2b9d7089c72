import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulingQueue } from '../../src/scheduler/queue.js';
import { FakeClock } from '../../src/util/clock.js';

const OPTS = { initialBackoffMs: 1000, maxBackoffMs: 10_000, maxUnschedulableMs: 300_000 };

async function popNow(q: SchedulingQueue): Promise<string | undefined> {
  let got: string | undefined | null = null;
  void q.pop().then((qp) => (got = qp?.key));
  await new Promise((r) => setImmediate(r));
  return got === null ? 'pending' : got;
}

describe('scheduling queue', () => {
  it('pops higher priority first, then oldest', async () => {
    const clock = new FakeClock();
    const q = new SchedulingQueue(clock, OPTS);
    q.add('a', 0);
    await clock.advance(1);
    q.add('b', 10);
    await clock.advance(1);
    q.add('c', 0);
    q.add('b', 10);
    assert.equal((await q.pop())?.key, 'b');
    assert.equal((await q.pop())?.key, 'a');
    assert.equal((await q.pop())?.key, 'c');
    assert.equal(await popNow(q), 'pending');
    q.close();
  });

  it('parks unschedulable pods until the cluster changes, honouring back-off', async () => {
    const clock = new FakeClock();
    const q = new SchedulingQueue(clock, OPTS);
    q.add('a', 0);
    const qp = (await q.pop())!;
    q.parkUnschedulable(qp, false);
    assert.equal(q.stats.unschedulable, 1);
    assert.equal(q.moveUnschedulable(true), 0, 'an unresolvable failure is not retried for freed resources');
    assert.equal(q.moveUnschedulable(), 1);
    // Still within its 1 s back-off: waits there first.
    assert.equal(q.stats.backoff, 1);
    await clock.advance(999);
    assert.equal(q.stats.active, 0);
    await clock.advance(1);
    assert.equal(q.stats.active, 1);
    const again = (await q.pop())!;
    assert.equal(again.attempts, 1);
    q.parkUnschedulable(again, true);
    await clock.advance(5000);
    assert.equal(q.moveUnschedulable(true), 1);
    assert.equal(q.stats.active, 1, 'back-off (2 s) already over');
    q.close();
  });

  it('retries long-parked pods and pods whose spec changed', async () => {
    const clock = new FakeClock();
    const q = new SchedulingQueue(clock, OPTS);
    q.add('a', 0);
    q.add('b', 0);
    q.parkUnschedulable((await q.pop())!, false);
    q.parkUnschedulable((await q.pop())!, false);
    q.add('a', 0);
    assert.equal(q.stats.unschedulable, 2, 'an unchanged update leaves it parked');
    q.add('a', 0, true);
    assert.equal(q.stats.unschedulable, 1);
    await clock.advance(299_000);
    assert.equal(q.flushLongParked(), 0);
    await clock.advance(1000);
    assert.equal(q.flushLongParked(), 1);
    q.close();
  });

  it('grows the back-off exponentially up to the maximum and forgets deleted pods', async () => {
    const clock = new FakeClock();
    const q = new SchedulingQueue(clock, OPTS);
    q.add('a', 0);
    const qp = (await q.pop())!;
    const waits: number[] = [];
    for (let i = 0; i < 6; i++) {
      qp.attempts = i;
      waits.push(q.backoffMs({ ...qp, attempts: i + 1 }));
    }
    assert.deepEqual(waits, [1000, 2000, 4000, 8000, 10_000, 10_000]);
    q.retryAfterError(qp);
    assert.equal(q.stats.backoff, 1);
    q.delete('a');
    assert.equal(q.has('a'), false);
    q.close();
    assert.equal(await q.pop(), undefined);
  });
});
