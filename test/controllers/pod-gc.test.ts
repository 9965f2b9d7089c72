import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { Informer } from '../../src/client/informer.js';
import type { ApiClient } from '../../src/client/rest.js';
import { PATHS, SharedInformers } from '../../src/controller-kit/informers.js';
import { PODS_PER_TURN, PodGCController, sortOutCandidates } from '../../src/controllers/pod-gc.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { systemClock, type Clock } from '../../src/util/clock.js';
import type { Logger } from '../../src/util/log.js';
import { addNode, addPod, events, getPod, harness, until, type Harness } from './node-lifecycle-harness.js';

const OPTIONS = { podGcOrphanQuarantineMs: 1000, terminatedPodGcThreshold: 12_500 };

/** Shared informers whose node cache never shows `hidden`: a cache that lags behind the API. */
class HidingInformers extends SharedInformers {
  private nodes?: Informer;
  constructor(private readonly c: ApiClient, private readonly clk: Clock, private readonly lg: Logger) {
    super(c, clk, lg);
  }
  override for<T extends KubeObject = KubeObject>(path: string): Informer<T> {
    if (path !== PATHS.nodes) return super.for<T>(path);
    this.nodes ??= new Informer(this.c, { path, fieldSelector: 'metadata.name!=hidden', clock: this.clk, log: this.lg });
    return this.nodes as unknown as Informer<T>;
  }
  override start(signal: AbortSignal): void {
    super.start(signal);
    if (this.nodes) void this.nodes.run(signal);
  }
}

describe('pod GC', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('force-deletes pods of a node that is gone, after the quarantine, only when a live read agrees; a re-created node keeps its pods', async () => {
    h = await harness({ clock: systemClock, options: OPTIONS, informers: (c, clk, lg) => new HidingInformers(c, clk, lg) });
    const hh = h;
    await addNode(hh.client, hh.clock, 'hidden');
    await addNode(hh.client, hh.clock, 'n9');
    await addPod(hh.client, 'default', 'on-hidden', { nodeName: 'hidden' });
    await addPod(hh.client, 'default', 'on-n9', { nodeName: 'n9' });
    hh.start(new PodGCController({ checkPeriodMs: 200 }));
    // n9 is deleted and re-registers within the quarantine (N9); `ghost` never existed.
    await hh.client.delete('/api/v1/nodes/n9');
    await hh.client.delete('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n9');
    const start = Date.now();
    await addPod(hh.client, 'default', 'orphan', { nodeName: 'ghost' });
    // A pass has run since n9 went missing once this marker (created after) is marked Failed.
    await addPod(hh.client, 'default', 'marker', {}, { finalizers: ['example.com/hold'] });
    await hh.client.delete('/api/v1/namespaces/default/pods/marker');
    await until(async () => (await getPod(hh.client, 'default', 'marker'))?.status?.phase === 'Failed', 'a GC pass after n9 went missing', 5000);
    await addNode(hh.client, hh.clock, 'n9');
    await until(async () => !(await getPod(hh.client, 'default', 'orphan')), 'orphan force-deleted', 5000);
    assert.ok(Date.now() - start >= OPTIONS.podGcOrphanQuarantineMs, 'not before the quarantine');
    await until(async () => (await events(hh.client, 'DeletionByPodGC')).some((e) => e.message === 'PodGC: node no longer exists'), 'event');
    // The cache never saw `hidden`, but the API has it: its pod stays. So does the re-created node's.
    assert.ok(await getPod(hh.client, 'default', 'on-hidden'));
    assert.ok(await getPod(hh.client, 'default', 'on-n9'));
  });

  it('marks an orphan Failed with a DisruptionTarget condition before deleting it', async () => {
    h = await harness({ clock: systemClock, options: OPTIONS });
    const hh = h;
    // A finalizer keeps the pod readable after the force delete.
    await addPod(hh.client, 'default', 'held', { nodeName: 'ghost' }, { finalizers: ['example.com/hold'] });
    hh.start(new PodGCController({ checkPeriodMs: 200 }));
    const pod = await until(async () => {
      const p = await getPod(hh.client, 'default', 'held');
      return p?.metadata.deletionTimestamp ? p : undefined;
    }, 'held pod deleted', 5000);
    assert.equal(pod.status?.phase, 'Failed');
    const c = pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget');
    assert.equal(c?.reason, 'DeletionByPodGC');
    assert.equal(c?.message, 'PodGC: node no longer exists');
    await hh.client.patch('/api/v1/namespaces/default/pods/held', { metadata: { finalizers: null } }, 'merge');
    await until(async () => !(await getPod(hh.client, 'default', 'held')), 'held pod gone');
  });

  it('deletes the oldest terminated pods beyond the threshold, evicted ones first', async () => {
    h = await harness({ clock: systemClock, options: { ...OPTIONS, terminatedPodGcThreshold: 2 } });
    const hh = h;
    for (const [name, phase, reason] of [
      ['t-a', 'Succeeded'],
      ['t-b', 'Succeeded'],
      ['t-c', 'Failed'],
      ['t-d', 'Failed', 'Evicted'],
    ] as const) {
      await addPod(hh.client, 'default', name, {});
      await hh.client.patch(`/api/v1/namespaces/default/pods/${name}/status`, { status: { phase, ...(reason ? { reason } : {}) } }, 'strategic');
    }
    await addPod(hh.client, 'default', 'running', {});
    hh.start(new PodGCController({ checkPeriodMs: 200 }));
    await until(async () => !(await getPod(hh.client, 'default', 't-d')) && !(await getPod(hh.client, 'default', 't-a')), 'evicted and oldest deleted', 5000);
    for (const name of ['t-b', 't-c', 'running']) assert.ok(await getPod(hh.client, 'default', name), `${name} kept`);
  });

  it('force-deletes terminating pods that were never scheduled or sit on an out-of-service node', async () => {
    h = await harness({ clock: systemClock, options: OPTIONS });
    const hh = h;
    await addNode(hh.client, hh.clock, 'oos', { ready: 'False', taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] });
    await addNode(hh.client, hh.clock, 'down', { ready: 'False' });
    await addPod(hh.client, 'default', 'fenced', { nodeName: 'oos', tolerations: [{ operator: 'Exists' }] });
    await addPod(hh.client, 'default', 'waiting', { nodeName: 'down' });
    await addPod(hh.client, 'default', 'unscheduled', {}, { finalizers: ['example.com/hold'] });
    for (const name of ['fenced', 'waiting', 'unscheduled']) await hh.client.delete(`/api/v1/namespaces/default/pods/${name}`);
    hh.start(new PodGCController({ checkPeriodMs: 200 }));
    await until(async () => !(await getPod(hh.client, 'default', 'fenced')), 'pod on out-of-service node force-deleted', 5000);
    const unscheduled = await until(async () => {
      const p = await getPod(hh.client, 'default', 'unscheduled');
      return p?.status?.phase === 'Failed' ? p : undefined;
    }, 'unscheduled terminating pod marked Failed', 5000);
    assert.ok(unscheduled.metadata.deletionTimestamp);
    // Without the out-of-service taint a NotReady node's terminating pod waits for its agent.
    const waiting = await getPod(hh.client, 'default', 'waiting');
    assert.ok(waiting?.metadata.deletionTimestamp);
    assert.notEqual(waiting?.status?.phase, 'Failed');
  });

  it('sorts out every rule\'s pods in one pass that gives the event loop back between turns', async () => {
    const n = 2 * PODS_PER_TURN + 500;
    const pods: Pod[] = Array.from({ length: n }, (_, i) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `p${i}`, namespace: 'default', uid: `u${i}`, ...(i % 10 === 1 || i % 10 === 2 ? { deletionTimestamp: '2026-12-07T00:00:00Z' } : {}) },
      spec: { containers: [{ name: 'c', image: 'x' }], ...(i % 10 === 2 ? {} : { nodeName: i % 10 === 3 ? 'gone' : 'here' }) },
      status: { phase: i % 10 === 4 ? 'Succeeded' : 'Running' },
    }));
    // Work queued before the pass runs before it ends only if the pass gives the loop back.
    let finished = false;
    let otherWorkRan = false;
    setImmediate(() => (otherWorkRan = !finished));
    const found = await sortOutCandidates(pods, (name) => name === 'here', true, new AbortController().signal).then((f) => ((finished = true), f));
    assert.ok(otherWorkRan, 'other work ran while the pass was under way');
    const tenth = n / 10;
    assert.equal(found.terminated.length, tenth);
    assert.equal(found.terminatingOnNode.length, tenth);
    assert.equal(found.terminatingUnscheduled.length, tenth);
    assert.deepEqual([...found.onMissingNodes.keys()], ['gone']);
    assert.equal(found.onMissingNodes.get('gone')!.length, tenth);
    assert.equal(found.uids?.size, n);
    assert.equal((await sortOutCandidates(pods, () => true, false, new AbortController().signal)).uids, undefined);
    const stopped = new AbortController();
    stopped.abort();
    await assert.rejects(sortOutCandidates(pods, () => true, false, stopped.signal), { name: 'AbortError' });
  });
});
