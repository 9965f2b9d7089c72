import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../src/api/kinds/node.js';
import type { KubeList } from '../../src/api/types.js';
import { NodeLifecycleController } from '../../src/controllers/node-lifecycle.js';
import { computeZoneState } from '../../src/controllers/node-lifecycle-zones.js';
import { RateLimitedTimedQueue } from '../../src/controllers/node-lifecycle-rate-limiter.js';
import { FakeClock } from '../../src/util/clock.js';
import {
  addNode,
  addPod,
  advanceFor,
  advanceUntil,
  events,
  getNode,
  getPod,
  harness,
  postReady,
  readyOf,
  renewLease,
  taintKeys,
  until,
  type Harness,
} from './node-lifecycle-harness.js';

const TIMINGS = {
  nodeMonitorPeriodMs: 1000,
  nodeMonitorGracePeriodMs: 5000,
  nodeStartupGracePeriodMs: 10_000,
  nodeGcTimeoutMs: 3_600_000,
  nodeEvictionRate: 100,
  secondaryNodeEvictionRate: 0.5,
  largeClusterSizeThreshold: 4,
  unhealthyZoneThreshold: 0.55,
};

const UNREACHABLE_BOTH = ['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule'];

describe('node lifecycle controller', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  async function setup(options: Partial<typeof TIMINGS> = {}): Promise<{ h: Harness; clock: FakeClock }> {
    const clock = new FakeClock(Date.now());
    h = await harness({ clock, options: { ...TIMINGS, ...options } });
    return { h, clock };
  }

  const heartbeat = (hh: Harness, names: string[]) => async () => {
    for (const n of names) await renewLease(hh.client, hh.clock, n);
  };

  it('marks a node whose Lease goes stale Unknown with unreachable taints and its pods not Ready, and restores it when it reports Ready again', async () => {
    const { h, clock } = await setup();
    for (const n of ['a', 'b', 'c']) await addNode(h.client, clock, n);
    await addPod(h.client, 'default', 'p1', { nodeName: 'a' });
    await h.client.patch('/api/v1/namespaces/default/pods/p1/status', { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } }, 'strategic');
    h.start(new NodeLifecycleController());

    // b and c heartbeat; a has gone silent.
    const silentFor = await advanceUntil(clock, async () => readyOf(await getNode(h.client, 'a'))?.status === 'Unknown', {
      stepMs: 500,
      maxFakeMs: 15_000,
      each: heartbeat(h, ['b', 'c']),
      what: 'a Unknown',
    });
    assert.ok(silentFor > TIMINGS.nodeMonitorGracePeriodMs, `flipped after ${silentFor} ms, within the grace period`);
    const a = await getNode(h.client, 'a');
    assert.equal(readyOf(a)?.reason, 'NodeStatusUnknown');
    assert.equal(readyOf(a)?.message, 'Kubelet stopped posting node status.');
    await advanceUntil(clock, async () => taintKeys(await getNode(h.client, 'a')).join() === UNREACHABLE_BOTH.join(), {
      stepMs: 500,
      maxFakeMs: 5000,
      each: heartbeat(h, ['b', 'c']),
      what: 'unreachable NoSchedule + NoExecute taints on a',
    });
    const noExec = (await getNode(h.client, 'a'))!.spec!.taints!.find((t) => t.effect === 'NoExecute')!;
    assert.ok(noExec.timeAdded, 'NoExecute taint carries timeAdded');
    const pod = await getPod(h.client, 'default', 'p1');
    assert.equal(pod?.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    for (const n of ['b', 'c']) {
      const node = await getNode(h.client, n);
      assert.equal(readyOf(node)?.status, 'True');
      assert.deepEqual(taintKeys(node), []);
    }
    await until(async () => (await events(h.client, 'NodeNotReady')).some((e) => (e.involvedObject as { name: string }).name === 'a'), 'NodeNotReady event');

    // a comes back: its agent renews the Lease and posts Ready.
    await renewLease(h.client, clock, 'a');
    await postReady(h.client, clock, 'a', 'True');
    await advanceUntil(clock, async () => taintKeys(await getNode(h.client, 'a')).length === 0, {
      stepMs: 500,
      maxFakeMs: 5000,
      each: heartbeat(h, ['a', 'b', 'c']),
      what: 'taints removed from a',
    });
    assert.equal(readyOf(await getNode(h.client, 'a'))?.status, 'True');
  });

  it('turns a reported Ready=False into not-ready taints', async () => {
    const { h, clock } = await setup();
    for (const n of ['a', 'b', 'c']) await addNode(h.client, clock, n);
    h.start(new NodeLifecycleController());
    await postReady(h.client, clock, 'a', 'False');
    await advanceUntil(clock, async () => taintKeys(await getNode(h.client, 'a')).join() === 'node.kubernetes.io/not-ready:NoExecute,node.kubernetes.io/not-ready:NoSchedule', {
      stepMs: 500,
      maxFakeMs: 4000,
      each: heartbeat(h, ['a', 'b', 'c']),
      what: 'not-ready taints on a',
    });
    // The agent still heartbeats: the controller must not call it Unknown.
    assert.equal(readyOf(await getNode(h.client, 'a'))?.status, 'False');
  });

  it('gives every node a fresh grace period under a new leader', async () => {
    const { h, clock } = await setup();
    const old = clock.now() - 3_600_000;
    // Leases last renewed an hour ago, and a NoExecute taint left by a previous leader.
    await addNode(h.client, clock, 'a', { leaseRenewMs: old, taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: new Date(old).toISOString().replace(/\.\d+Z/, 'Z') }] });
    for (const n of ['b', 'c']) await addNode(h.client, clock, n, { leaseRenewMs: old });
    h.start(new NodeLifecycleController());
    // Within the grace period nothing flips, and the stale NoExecute taint is taken back.
    await advanceUntil(clock, async () => taintKeys(await getNode(h.client, 'a')).length === 0, { stepMs: 500, maxFakeMs: 3000, what: 'old taint removed' });
    const nodes = await h.client.get<KubeList<Node>>('/api/v1/nodes');
    for (const n of nodes.items) assert.equal(readyOf(n)?.status, 'True', `${n.metadata.name} flipped before its grace period`);
    // After it, only the node that stays silent goes Unknown.
    await advanceUntil(clock, async () => readyOf(await getNode(h.client, 'a'))?.status === 'Unknown', {
      stepMs: 500,
      maxFakeMs: 10_000,
      each: heartbeat(h, ['b', 'c']),
      what: 'a Unknown',
    });
    assert.equal(readyOf(await getNode(h.client, 'b'))?.status, 'True');
  });

  it('in full disruption (every node silent) evicts nothing and deletes no node', async () => {
    const { h, clock } = await setup({ nodeGcTimeoutMs: 8000 });
    for (const n of ['a', 'b', 'c']) await addNode(h.client, clock, n);
    h.start(new NodeLifecycleController());
    await advanceUntil(
      clock,
      async () => {
        const nodes = await h.client.get<KubeList<Node>>('/api/v1/nodes');
        return nodes.items.every((n) => readyOf(n)?.status === 'Unknown' && taintKeys(n).includes('node.kubernetes.io/unreachable:NoSchedule'));
      },
      { stepMs: 500, maxFakeMs: 10_000, what: 'all Unknown' },
    );
    // Well past node-gc-timeout: still no NoExecute taint, still every node.
    await advanceFor(clock, 15_000, 1000);
    const nodes = await h.client.get<KubeList<Node>>('/api/v1/nodes');
    assert.equal(nodes.items.length, 3);
    for (const n of nodes.items) assert.deepEqual(taintKeys(n), ['node.kubernetes.io/unreachable:NoSchedule'], `${n.metadata.name}`);
  });

  it('slows NoExecute tainting in a large partially disrupted zone and stops it in a small one', async () => {
    const { h, clock } = await setup();
    const zone = (z: string) => ({ labels: { 'topology.kubernetes.io/zone': z } });
    const large = ['l1', 'l2', 'l3', 'l4', 'l5'];
    const small = ['s1', 's2', 's3', 's4'];
    for (const n of large) await addNode(h.client, clock, n, zone('large'));
    for (const n of small) await addNode(h.client, clock, n, zone('small'));
    h.start(new NodeLifecycleController());
    // 3 of 5 and 3 of 4 go silent: both zones are partially disrupted (> 2 and >= 55%).
    const alive = ['l4', 'l5', 's4'];
    const dead = ['l1', 'l2', 'l3'];
    const taintedAt = new Map<string, number>();
    await advanceUntil(
      clock,
      async () => {
        for (const n of dead) {
          if (!taintedAt.has(n) && taintKeys(await getNode(h.client, n)).includes('node.kubernetes.io/unreachable:NoExecute')) taintedAt.set(n, clock.now());
        }
        return taintedAt.size === dead.length;
      },
      { stepMs: 250, maxFakeMs: 20_000, each: heartbeat(h, alive), what: 'all three tainted in the large zone', realTimeoutMs: 30_000 },
    );
    const times = [...taintedAt.values()].sort((x, y) => x - y);
    // secondaryNodeEvictionRate 0.5/s: one node per 2 s (the normal rate here would be 100/s).
    assert.ok(times[1]! - times[0]! >= 1500, `gap ${times[1]! - times[0]!} ms`);
    assert.ok(times[2]! - times[1]! >= 1500, `gap ${times[2]! - times[1]!} ms`);
    for (const n of ['s1', 's2', 's3']) {
      const node = await getNode(h.client, n);
      assert.equal(readyOf(node)?.status, 'Unknown');
      assert.deepEqual(taintKeys(node), ['node.kubernetes.io/unreachable:NoSchedule'], `${n} must not get NoExecute in a small disrupted zone`);
    }
  });

  it('deletes a node out of contact past node-gc-timeout while its zone is Normal', async () => {
    const { h, clock } = await setup({ nodeGcTimeoutMs: 10_000 });
    for (const n of ['a', 'b', 'c']) await addNode(h.client, clock, n);
    h.start(new NodeLifecycleController());
    const elapsed = await advanceUntil(clock, async () => !(await getNode(h.client, 'a')), {
      stepMs: 500,
      maxFakeMs: 20_000,
      each: heartbeat(h, ['b', 'c']),
      what: 'a deleted',
    });
    assert.ok(elapsed >= 10_000, `deleted after ${elapsed} ms`);
    assert.ok(await getNode(h.client, 'b'));
    await until(async () => (await events(h.client, 'DeletingNode')).some((e) => (e.involvedObject as { name: string }).name === 'a'), 'DeletingNode event');
  });
});

describe('zone state and eviction rate limiting', () => {
  it('computes zone states as upstream', () => {
    const c = (s: 'True' | 'False' | 'Unknown') => ({ type: 'Ready', status: s });
    assert.equal(computeZoneState([c('True'), c('Unknown')], 0.55).state, 'Normal');
    assert.equal(computeZoneState([c('Unknown'), c('Unknown')], 0.55).state, 'FullDisruption');
    assert.equal(computeZoneState([c('True'), c('Unknown'), c('Unknown'), c('False')], 0.55).state, 'PartialDisruption');
    assert.equal(computeZoneState([c('True'), c('True'), c('Unknown'), c('Unknown'), c('False'), c('True')], 0.55).state, 'Normal');
    assert.equal(computeZoneState([c('True'), undefined], 0.55).state, 'Normal');
  });

  it('drains a zone queue one node per token and not at all at qps 0', async () => {
    const clock = new FakeClock();
    const q = new RateLimitedTimedQueue(1, clock);
    for (const n of ['a', 'b', 'c']) q.add(n, n);
    assert.equal(q.add('a', 'a'), false);
    const done: string[] = [];
    const take = async (name: string) => (done.push(name), { done: true as const });
    await q.try(take);
    assert.deepEqual(done, ['a']);
    await clock.advance(1000);
    await q.try(take);
    assert.deepEqual(done, ['a', 'b']);
    q.swapLimiter(0);
    await clock.advance(5000);
    await q.try(take);
    assert.deepEqual(done, ['a', 'b']);
    // A processed node stays a member until removed, so re-adding it each pass is a no-op.
    assert.equal(q.add('a', 'a'), false);
    assert.equal(q.remove('a'), true);
    assert.equal(q.add('a', 'a'), true);
  });
});
