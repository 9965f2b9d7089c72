// The scheduler against a real in-process API server: bindings, conditions and events as a user
// sees them through the API.
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ApiClient } from '../../src/client/rest.js';
import { DEFAULT_CONTROLLER_OPTIONS, controllerContext } from '../../src/controller-kit/manager.js';
import { SchedulerController, storageChangeMatters } from '../../src/scheduler/scheduler.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/cluster.js';
import { affinityPod, makeNode, makePod, type NodeSpecOptions, type PodSpecOptions } from './fixtures.js';

interface Event extends KubeObject {
  reason: string;
  message: string;
  type: string;
  count: number;
  source?: { component?: string };
  involvedObject: { name: string; namespace?: string; kind?: string };
}

describe('scheduler', () => {
  let srv: InProcessServer;
  let client: ApiClient;
  let running: { stop(): void; controller: SchedulerController } | undefined;
  let nsSeq = 0;
  let ns = '';

  before(async () => {
    srv = await startInProcessServer();
    client = srv.client();
  });
  after(async () => {
    await srv.stop();
  });

  function startScheduler(): SchedulerController {
    const ac = new AbortController();
    const log = silentLogger();
    const ctx = controllerContext(client, systemClock, log, DEFAULT_CONTROLLER_OPTIONS);
    const informers = ctx.informers;
    // Short back-off so retries after cluster changes are quick in tests.
    const controller = new SchedulerController({ queue: { initialBackoffMs: 50, maxBackoffMs: 200, maxUnschedulableMs: 60_000 } });
    controller.start(ctx, ac.signal);
    informers.start(ac.signal);
    running = { stop: () => ac.abort(), controller };
    return controller;
  }

  async function newNamespace(): Promise<string> {
    ns = `sched-${++nsSeq}`;
    await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    return ns;
  }

  afterEach(async () => {
    running?.stop();
    running = undefined;
    // Leave nothing behind for the next test's scheduler: no nodes, no pods.
    const nodes = await client.get<KubeList<Node>>('/api/v1/nodes');
    await Promise.all(nodes.items.map((n) => client.delete(`/api/v1/nodes/${n.metadata.name}`)));
    const pods = await client.get<KubeList<Pod>>(`/api/v1/pods`);
    for (const p of pods.items) {
      const path = `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;
      if (p.metadata.finalizers?.length) await client.patch(path, { metadata: { finalizers: null } }, 'merge');
      await client.delete(path, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 }).catch(() => {});
    }
  });

  async function createNode(name: string, o: NodeSpecOptions = {}): Promise<void> {
    await client.create('/api/v1/nodes', makeNode(name, o));
  }

  async function createPod(name: string, o: PodSpecOptions = {}): Promise<Pod> {
    const pod = makePod(name, { ...o, namespace: ns });
    delete (pod.metadata as { uid?: string }).uid;
    return client.create<Pod>(`/api/v1/namespaces/${ns}/pods`, pod);
  }

  async function getPod(name: string): Promise<Pod> {
    return client.get<Pod>(`/api/v1/namespaces/${ns}/pods/${name}`);
  }

  async function nodeOf(name: string, timeoutMs = 10_000): Promise<string> {
    return eventually(async () => (await getPod(name)).spec?.nodeName, timeoutMs, `pod ${name} to be bound`);
  }

  async function events(podName: string): Promise<Event[]> {
    const list = await client.get<KubeList<Event>>(`/api/v1/namespaces/${ns}/events`);
    return list.items.filter((e) => e.involvedObject.name === podName);
  }

  async function unschedulableMessage(name: string): Promise<string> {
    return eventually(
      async () => {
        const c = (await getPod(name)).status?.conditions?.find((x) => x.type === 'PodScheduled');
        return c?.status === 'False' && c.reason === 'Unschedulable' ? c.message : undefined;
      },
      10_000,
      `pod ${name} to be marked unschedulable`,
    );
  }

  /** Waits a moment and checks the pod is still not bound. */
  async function staysPending(name: string, ms = 400): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    assert.equal((await getPod(name)).spec?.nodeName, undefined, `${name} should stay pending`);
  }

  it('spreads 6 replicas over 3 nodes, 2 on each, and records Scheduled events', async () => {
    await newNamespace();
    for (const n of ['node-a', 'node-b', 'node-c']) await createNode(n);
    for (let i = 0; i < 6; i++) await createPod(`web-${i}`, { owner: 'web', labels: { app: 'web' } });
    const controller = startScheduler();
    const placed = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const node = await nodeOf(`web-${i}`);
      placed.set(node, (placed.get(node) ?? 0) + 1);
    }
    assert.deepEqual(Object.fromEntries([...placed].sort()), { 'node-a': 2, 'node-b': 2, 'node-c': 2 });
    const pod = await getPod('web-0');
    const cond = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'True');
    const ev = await eventually(async () => (await events('web-0')).find((e) => e.reason === 'Scheduled'), 5000, 'Scheduled event');
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.message, `Successfully assigned ${ns}/web-0 to ${pod.spec!.nodeName}`);
    assert.equal(ev.source?.component, 'default-scheduler');
    assert.equal(controller.counters.scheduled, 6);
  });

  it('keeps pods off tainted nodes unless they tolerate the taint', async () => {
    await newNamespace();
    await createNode('gpu', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    await createNode('plain');
    startScheduler();
    for (let i = 0; i < 4; i++) await createPod(`p-${i}`);
    for (let i = 0; i < 4; i++) assert.equal(await nodeOf(`p-${i}`), 'plain');
    await createPod('tolerant', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }], nodeSelector: { 'kubernetes.io/hostname': 'gpu' } });
    assert.equal(await nodeOf('tolerant'), 'gpu');
  });

  it('honours nodeSelector and required node affinity', async () => {
    await newNamespace();
    await createNode('ssd-1', { labels: { disk: 'ssd', gen: '5' } });
    await createNode('hdd-1', { labels: { disk: 'hdd', gen: '3' } });
    await createNode('bare');
    startScheduler();
    await createPod('sel', { nodeSelector: { disk: 'ssd' } });
    const cases: [string, Pod, string][] = [
      ['in', affinityPod('in', 'disk', 'In', ['hdd']), 'hdd-1'],
      ['notin', affinityPod('notin', 'gen', 'NotIn', ['5', '3']), 'bare'],
      ['gt', affinityPod('gt', 'gen', 'Gt', ['4']), 'ssd-1'],
      ['lt', affinityPod('lt', 'gen', 'Lt', ['4']), 'hdd-1'],
      ['dne', affinityPod('dne', 'disk', 'DoesNotExist'), 'bare'],
    ];
    for (const [, pod] of cases) {
      pod.metadata.namespace = ns;
      delete (pod.metadata as { uid?: string }).uid;
      await client.create(`/api/v1/namespaces/${ns}/pods`, pod);
    }
    assert.equal(await nodeOf('sel'), 'ssd-1');
    for (const [name, , want] of cases) assert.equal(await nodeOf(name), want, name);
    await createPod('nowhere', { nodeSelector: { disk: 'nvme' } });
    assert.equal(
      await unschedulableMessage('nowhere'),
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
  });

  it('leaves a pod too big for every node pending with an upstream-like reason, and places it when a bigger node joins', async () => {
    await newNamespace();
    await createNode('small-1', { cpu: '2' });
    await createNode('small-2', { cpu: '2' });
    await createNode('tainted', { cpu: '2', taints: [{ key: 'team', value: 'infra', effect: 'NoSchedule' }] });
    startScheduler();
    await createPod('big', { cpu: '3', memory: '1Gi' });
    const message =
      '0/3 nodes are available: 1 node(s) had untolerated taint {team: infra}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..';
    assert.equal(await unschedulableMessage('big'), message);
    const failed = await eventually(async () => (await events('big')).find((e) => e.reason === 'FailedScheduling'), 5000, 'FailedScheduling event');
    assert.equal(failed.type, 'Warning');
    assert.equal(failed.message, message);
    assert.equal(failed.source?.component, 'default-scheduler');
    await staysPending('big');
    // An unrelated node change (a heartbeat-like status patch) must not produce new writes.
    const rv = (await getPod('big')).metadata.resourceVersion;
    await client.patch('/api/v1/nodes/small-1/status', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'still ready' }] } }, 'strategic');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await getPod('big')).metadata.resourceVersion, rv, 'the condition is written once per distinct message');
    await createNode('large', { cpu: '8' });
    assert.equal(await nodeOf('big'), 'large');
    const cond = (await getPod('big')).status?.conditions?.find((c) => c.type === 'PodScheduled');
    assert.equal(cond?.status, 'True');
  });

  it('respects the node pod limit (allocatable pods)', async () => {
    await newNamespace();
    await createNode('tiny', { pods: '2' });
    startScheduler();
    for (let i = 0; i < 3; i++) await createPod(`p-${i}`);
    await nodeOf('p-0');
    await nodeOf('p-1');
    assert.equal(
      await unschedulableMessage('p-2'),
      '0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
    );
    // A pod leaving frees a slot, and the parked pod is retried.
    await client.delete(`/api/v1/namespaces/${ns}/pods/p-0`, { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    assert.equal(await nodeOf('p-2'), 'tiny');
  });

  it('skips cordoned and not-Ready nodes, and retries when they become usable', async () => {
    await newNamespace();
    await createNode('cordoned', { unschedulable: true });
    await createNode('sick', { ready: 'False' });
    startScheduler();
    await createPod('p');
    assert.equal(
      await unschedulableMessage('p'),
      '0/2 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
    await client.patch('/api/v1/nodes/sick/status', { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }] } }, 'strategic');
    assert.equal(await nodeOf('p'), 'sick');
    await createPod('q', { nodeSelector: { 'kubernetes.io/hostname': 'cordoned' } });
    await unschedulableMessage('q');
    await client.patch('/api/v1/nodes/cordoned', { spec: { unschedulable: false } }, 'merge');
    assert.equal(await nodeOf('q'), 'cordoned');
  });

  it('never rebinds a bound pod and ignores terminating pods and other schedulers', async () => {
    await newNamespace();
    await createNode('n1');
    await createPod('bound', { nodeName: 'elsewhere' });
    const other = makePod('other', { namespace: ns });
    delete (other.metadata as { uid?: string }).uid;
    other.spec!.schedulerName = 'my-scheduler';
    await client.create(`/api/v1/namespaces/${ns}/pods`, other);
    const held = makePod('held', { namespace: ns });
    delete (held.metadata as { uid?: string }).uid;
    held.metadata.finalizers = ['test.skiff.dev/hold'];
    await client.create(`/api/v1/namespaces/${ns}/pods`, held);
    await client.delete(`/api/v1/namespaces/${ns}/pods/held`);
    assert.ok((await getPod('held')).metadata.deletionTimestamp);
    startScheduler();
    await createPod('fresh');
    assert.equal(await nodeOf('fresh'), 'n1');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal((await getPod('bound')).spec?.nodeName, 'elsewhere');
    assert.equal((await getPod('other')).spec?.nodeName, undefined);
    assert.equal((await getPod('held')).spec?.nodeName, undefined);
    assert.deepEqual((await events('bound')).map((e) => e.reason), []);
    assert.deepEqual((await events('held')).map((e) => e.reason), []);
  });

  it('retries a parked pod when its own spec changes, and waits for scheduling gates', async () => {
    await newNamespace();
    await createNode('dedicated', { taints: [{ key: 'team', value: 'a', effect: 'NoSchedule' }] });
    startScheduler();
    await createPod('p');
    await unschedulableMessage('p');
    // Adding a toleration is one of the few pod updates allowed; it must bring the pod back.
    await client.patch(`/api/v1/namespaces/${ns}/pods/p`, [{ op: 'add', path: '/spec/tolerations/-', value: { key: 'team', operator: 'Equal', value: 'a', effect: 'NoSchedule' } }], 'json');
    assert.equal(await nodeOf('p'), 'dedicated');
    const gated = makePod('gated', { namespace: ns, tolerations: [{ operator: 'Exists' }] });
    delete (gated.metadata as { uid?: string }).uid;
    gated.spec!.schedulingGates = [{ name: 'example.com/quota' }];
    await client.create(`/api/v1/namespaces/${ns}/pods`, gated);
    const cond = await eventually(
      async () => (await getPod('gated')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.reason === 'SchedulingGated'),
      5000,
      'SchedulingGated condition',
    );
    assert.equal(cond.status, 'False');
    await staysPending('gated', 200);
    await client.patch(`/api/v1/namespaces/${ns}/pods/gated`, { spec: { schedulingGates: null } }, 'merge');
    assert.equal(await nodeOf('gated'), 'dedicated');
  });

  it('accounts for pods already bound and starts over cleanly in a new term', async () => {
    await newNamespace();
    await createNode('n1', { cpu: '2' });
    await createNode('n2', { cpu: '2' });
    await createPod('existing', { nodeName: 'n1', cpu: '1500m' });
    startScheduler();
    await createPod('a', { cpu: '1' });
    assert.equal(await nodeOf('a'), 'n2');
    running!.stop();
    // A new leadership term: fresh caches, same outcome.
    startScheduler();
    await createPod('b', { cpu: '1' });
    assert.equal(await nodeOf('b'), 'n2');
    await createPod('c', { cpu: '1' });
    assert.match(await unschedulableMessage('c'), /^0\/2 nodes are available: 2 Insufficient cpu\./);
  });
});

it('only storage edits that scheduling reads requeue parked pods: spec, phase, deletion, the selected node', () => {
  const claim = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', resourceVersion: '1' }, spec: { storageClassName: 'local-path' }, status: { phase: 'Pending' } };
  const edit = (f: (o: typeof claim & { metadata: Record<string, unknown> }) => void) => {
    const o = structuredClone(claim) as typeof claim & { metadata: Record<string, unknown> };
    f(o);
    return o;
  };
  // The provisioner's annotations, a new resourceVersion, a status beside the phase: nothing a pod's fit reads.
  assert.equal(storageChangeMatters(claim, edit((o) => { o.metadata.resourceVersion = '2'; o.metadata.annotations = { 'volume.kubernetes.io/storage-provisioner': 'rancher.io/local-path' }; })), false);
  assert.equal(storageChangeMatters(claim, edit((o) => { (o.status as Record<string, unknown>).capacity = { storage: '1Gi' }; })), false);
  assert.equal(storageChangeMatters(claim, edit((o) => { o.status.phase = 'Bound'; })), true);
  assert.equal(storageChangeMatters(claim, edit((o) => { (o.spec as Record<string, unknown>).volumeName = 'pv-1'; })), true);
  assert.equal(storageChangeMatters(claim, edit((o) => { o.metadata.deletionTimestamp = '2026-12-08T00:00:00Z'; })), true);
  assert.equal(storageChangeMatters(claim, edit((o) => { o.metadata.annotations = { 'volume.kubernetes.io/selected-node': 'node-1' }; })), true);
});
