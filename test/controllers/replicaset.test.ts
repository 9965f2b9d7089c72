import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ReplicaSet } from '../../src/api/kinds/replicaset.js';
import { podsToDelete, ReplicaSetController } from '../../src/controllers/replicaset.js';
import {
  CONTAINERS,
  eventually,
  events,
  isReady,
  laggingWatches,
  markReady,
  nsPath,
  pods,
  startControllers,
  startHarness,
  watchAll,
  type Harness,
} from './workload-harness.js';

function replicaSet(name: string, replicas: number, labels: Record<string, string>): ReplicaSet {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: { replicas, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: CONTAINERS('nginx:1.27') } } },
  };
}

describe('ReplicaSet controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it('creates owned pods, reports status, and scales down unready pods first', async () => {
    const ns = await h.namespace('rs-scale');
    const running = startControllers(h.client, [new ReplicaSetController()]);
    try {
      const created = await h.client.create<ReplicaSet>(nsPath(ns, 'replicasets'), replicaSet('web', 3, { app: 'web' }));
      const three = await eventually(async () => {
        const ps = await pods(h.client, ns);
        return ps.length === 3 && ps;
      }, 5000, '3 pods');
      for (const p of three) {
        assert.match(p.metadata.name!, /^web-[a-z0-9]{5}$/);
        assert.deepEqual(p.metadata.ownerReferences, [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
        ]);
        assert.equal(p.metadata.labels?.app, 'web');
      }
      await markReady(h.client, three[0]!);
      await markReady(h.client, three[1]!);
      await eventually(async () => {
        const rs = await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'web'));
        const s = rs.status;
        return s?.replicas === 3 && s.fullyLabeledReplicas === 3 && s.readyReplicas === 2 && s.availableReplicas === 2 && s.observedGeneration === rs.metadata.generation;
      }, 5000, 'status 3/3/2/2');

      // kubectl scale rs web --replicas=2: the one unready pod is the one to go.
      await h.client.patch(nsPath(ns, 'replicasets', 'web/scale'), { spec: { replicas: 2 } }, 'merge');
      const two = await eventually(async () => {
        const ps = await pods(h.client, ns);
        return ps.length === 2 && ps;
      }, 5000, '2 pods');
      assert.ok(two.every(isReady), 'only ready pods remain');
      await eventually(async () => {
        const rs = await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'web'));
        return rs.status?.replicas === 2 && rs.status.readyReplicas === 2 && rs.status.observedGeneration === rs.metadata.generation;
      }, 5000, 'status after scale-down');

      await h.client.patch(nsPath(ns, 'replicasets', 'web/scale'), { spec: { replicas: 0 } }, 'merge');
      await eventually(async () => (await pods(h.client, ns)).length === 0, 5000, 'no pods');
      // As Go writes it: replicas always, the other counters only when not zero.
      await eventually(async () => {
        const st = (await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'web'))).status;
        return st?.replicas === 0 && JSON.stringify(Object.keys(st).sort()) === JSON.stringify(['observedGeneration', 'replicas']);
      }, 5000, 'status of a scaled-down ReplicaSet: {replicas: 0, observedGeneration}');
      const evs = await events(h.client, ns, 'web');
      assert.equal(evs.filter((e) => e.reason === 'SuccessfulCreate').length, 3);
      assert.ok(evs.some((e) => e.reason === 'SuccessfulDelete' && e.message === `Deleted pod: ${three[2]!.metadata.name}`), 'the unready pod went first');
    } finally {
      running.stop();
    }
  });

  it("puts back a status someone else wrote (its own status writes only wake it a batch period later)", async () => {
    const ns = await h.namespace('rs-status');
    const running = startControllers(h.client, [new ReplicaSetController()]);
    try {
      await h.client.create<ReplicaSet>(nsPath(ns, 'replicasets'), replicaSet('web', 2, { app: 'web' }));
      await eventually(async () => (await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'web'))).status?.replicas === 2, 5000, 'status replicas 2');
      // Twice: a sync its pods' events had already scheduled may put back the first edit; only the
      // edit's own update is left to wake it for the second.
      for (const replicas of [7, 9]) {
        const edited = await h.client.patch<ReplicaSet>(nsPath(ns, 'replicasets', 'web/status'), { status: { replicas, readyReplicas: 5 } }, 'merge');
        assert.equal(edited.status?.replicas, replicas);
        await eventually(async () => {
          const st = (await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'web'))).status;
          return st?.replicas === 2 && st.readyReplicas === undefined;
        }, 5000, `status put back from ${replicas} to 2 replicas, none ready`);
      }
    } finally {
      running.stop();
    }
  });

  it('adopts matching orphans and releases pods whose labels stop matching', async () => {
    const ns = await h.namespace('rs-adopt');
    const running = startControllers(h.client, [new ReplicaSetController()]);
    try {
      const orphan = await h.client.create<Pod>(nsPath(ns, 'pods', undefined, 'v1'), {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'orphan', labels: { app: 'adopt' } },
        spec: { containers: CONTAINERS('nginx:1.27') },
      });
      const rs = await h.client.create<ReplicaSet>(nsPath(ns, 'replicasets'), replicaSet('adopter', 2, { app: 'adopt' }));
      await eventually(async () => {
        const ps = await pods(h.client, ns);
        const adopted = ps.find((p) => p.metadata.uid === orphan.metadata.uid);
        const ref = adopted?.metadata.ownerReferences?.[0];
        return ps.length === 2 && ref?.uid === rs.metadata.uid && ref?.controller === true;
      }, 5000, 'orphan adopted, one more pod created');

      await h.client.patch(nsPath(ns, 'pods', 'orphan', 'v1'), { metadata: { labels: { app: 'elsewhere' } } }, 'merge');
      await eventually(async () => {
        const ps = await pods(h.client, ns);
        const released = ps.find((p) => p.metadata.name === 'orphan');
        const owned = ps.filter((p) => p.metadata.ownerReferences?.some((r) => r.uid === rs.metadata.uid));
        return released && !released.metadata.ownerReferences?.length && owned.length === 2 && owned.every((p) => p.metadata.labels?.app === 'adopt');
      }, 5000, 'pod released and replaced');
    } finally {
      running.stop();
    }
  });

  it('never creates more pods than asked while a burst of updates outruns the watch (expectations)', async () => {
    const ns = await h.namespace('rs-burst');
    const seen = new Set<string>();
    const watcher = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
      for (const p of all) seen.add(p.metadata.uid!);
    });
    // The controller learns of each pod it creates half a second late.
    const running = startControllers(laggingWatches(h.client, '/pods', 500), [new ReplicaSetController()]);
    try {
      await watcher.informer.waitForSync();
      await h.client.create<ReplicaSet>(nsPath(ns, 'replicasets'), replicaSet('burst', 20, { app: 'burst' }));
      // Every update wakes the controller again, long before all of its creations are in its cache.
      const poke = async (i: number): Promise<void> => {
        try {
          await h.client.patch(nsPath(ns, 'replicasets', 'burst'), { metadata: { annotations: { poke: String(i) } } }, 'merge');
        } catch (e) {
          // The server gives up on a write that keeps losing compare-and-swap races; try again.
          if (!isStatusError(e, 'Conflict')) throw e;
          return poke(i);
        }
      };
      await Promise.all(Array.from({ length: 30 }, (_, i) => poke(i)));
      await eventually(async () => {
        const rs = await h.client.get<ReplicaSet>(nsPath(ns, 'replicasets', 'burst'));
        return rs.status?.replicas === 20 && rs.status.observedGeneration === rs.metadata.generation && (await pods(h.client, ns)).length === 20;
      }, 10_000, '20 pods');
      await eventually(() => seen.size >= 20, 2000, 'watch caught up');
      assert.equal(seen.size, 20, 'no pod was created beyond the 20 asked for');
      assert.equal((await events(h.client, ns, 'burst')).filter((e) => e.reason === 'SuccessfulDelete').length, 0);
    } finally {
      running.stop();
      watcher.stop();
    }
  });
});

describe('scale-down ranking', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  function pod(name: string, o: { node?: string; phase?: 'Pending' | 'Running' | 'Unknown'; readySecondsAgo?: number; restarts?: number; createdSecondsAgo?: number; cost?: number } = {}): Pod {
    return {
      metadata: {
        name,
        uid: name,
        creationTimestamp: at(o.createdSecondsAgo ?? 3600),
        ...(o.cost !== undefined ? { annotations: { 'controller.kubernetes.io/pod-deletion-cost': String(o.cost) } } : {}),
      },
      spec: { containers: [], ...(o.node ? { nodeName: o.node } : {}) },
      status: {
        phase: o.phase ?? 'Running',
        conditions: o.readySecondsAgo !== undefined ? [{ type: 'Ready', status: 'True', lastTransitionTime: at(o.readySecondsAgo) }] : [],
        containerStatuses: [{ name: 'c', ready: true, restartCount: o.restarts ?? 0, image: '', imageID: '' }],
      },
    };
  }
  const first = (ps: Pod[], related: Pod[] = ps) => podsToDelete(ps, related, 1, now)[0]!.metadata.name;

  it('orders as upstream: unscheduled, pending, unready, cheap, doubled up, recently ready, restarting, newest', () => {
    assert.equal(first([pod('a', { node: 'n1', readySecondsAgo: 10 }), pod('b', { readySecondsAgo: 10 })]), 'b');
    assert.equal(first([pod('a', { node: 'n1' }), pod('b', { node: 'n1', phase: 'Pending' })]), 'b');
    assert.equal(first([pod('a', { node: 'n1', phase: 'Unknown' }), pod('b', { node: 'n1', phase: 'Running' })]), 'a');
    assert.equal(first([pod('a', { node: 'n1', readySecondsAgo: 10 }), pod('b', { node: 'n2' })]), 'b');
    assert.equal(first([pod('a', { node: 'n1', readySecondsAgo: 10, cost: 5 }), pod('b', { node: 'n2', readySecondsAgo: 10, cost: -1 })]), 'b');
    const doubled = [pod('a', { node: 'n1', readySecondsAgo: 10 }), pod('b', { node: 'n2', readySecondsAgo: 10 }), pod('c', { node: 'n2', readySecondsAgo: 10 })];
    assert.notEqual(first(doubled), 'a');
    assert.equal(first([pod('a', { node: 'n1', readySecondsAgo: 5000 }), pod('b', { node: 'n2', readySecondsAgo: 5 })]), 'b');
    assert.equal(first([pod('a', { node: 'n1', restarts: 0 }), pod('b', { node: 'n2', restarts: 3 })]), 'b');
    assert.equal(first([pod('a', { node: 'n1', createdSecondsAgo: 5000 }), pod('b', { node: 'n2', createdSecondsAgo: 5 })]), 'b');
  });
});
