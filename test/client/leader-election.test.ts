import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LeaderElector } from '../../src/client/leader-election.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/cluster.js';

describe('leader election on a Lease', () => {
  let srv: InProcessServer;
  before(async () => {
    srv = await startInProcessServer();
  });
  after(async () => {
    await srv.stop();
  });

  function candidate(identity: string, leading: Set<string>) {
    const stop = new AbortController();
    const elector = new LeaderElector({
      client: srv.client(),
      namespace: 'kube-system',
      name: 'test-election',
      identity,
      leaseDurationMs: 1000,
      renewDeadlineMs: 700,
      retryPeriodMs: 100,
      clock: systemClock,
      log: silentLogger(),
      onStartedLeading: (signal) => {
        leading.add(identity);
        signal.addEventListener('abort', () => leading.delete(identity));
      },
    });
    const done = elector.run(stop.signal);
    return { stop: () => (stop.abort(), done), elector };
  }

  it('elects exactly one leader and hands over when it stops', async () => {
    const leading = new Set<string>();
    const a = candidate('a', leading);
    const b = candidate('b', leading);
    const c = candidate('c', leading);
    await eventually(() => leading.size === 1, 5000, 'a leader');
    // Stays one leader over several renew periods.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(leading.size, 1);
    }
    const first = [...leading][0]!;
    const byId = { a, b, c } as Record<string, ReturnType<typeof candidate>>;
    await byId[first]!.stop();
    await eventually(() => leading.size === 1 && !leading.has(first), 5000, 'a new leader');
    const lease = await srv.client().get<{ spec: { holderIdentity: string; leaseTransitions: number } }>('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/test-election');
    assert.equal(lease.spec.holderIdentity, [...leading][0]);
    assert.ok(lease.spec.leaseTransitions >= 1);
    for (const id of Object.keys(byId)) if (id !== first) await byId[id]!.stop();
    assert.equal(leading.size, 0);
  });
});
