// Which pod events wake a ReplicaSet, and when: ownership at once, the last creation or deletion
// its expectations wait for at once, the others of a batch and status changes that can move its
// counts after a batch period, the rest never.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ReplicaSet } from '../../src/api/kinds/replicaset.js';
import { workloadSelector } from '../../src/api/kinds/replicaset.js';
import type { Informer, InformerHandlers } from '../../src/client/informer.js';
import { Expectations, watchOwnedPods } from '../../src/controllers/pod-control.js';
import { replicaCountsMayChange, statusOnly } from '../../src/controllers/replicaset.js';
import { FakeClock } from '../../src/util/clock.js';

const rs: ReplicaSet = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web', namespace: 'ns', uid: 'rs-1' },
  spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } } } },
};

let rv = 1;
function pod(change: (p: Pod) => void = () => {}): Pod {
  const p: Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-1', namespace: 'ns', uid: 'p-1', resourceVersion: String(++rv), labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-1', controller: true }] },
    spec: { containers: [{ name: 'c', image: 'x' }] },
    status: { phase: 'Pending' },
  };
  change(p);
  return p;
}
const ready = (at: string) => (p: Pod) => {
  p.spec!.nodeName = 'n1';
  p.status = { phase: 'Running', podIP: '10.0.0.2', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at }] };
};

/** A ReplicaSet's pod wiring over a stand-in informer: the pod handlers, and who was woken how. */
function wire(expectations = new Expectations(new FakeClock())) {
  let handlers: InformerHandlers<Pod> | undefined;
  const pods = { addHandlers: (h: InformerHandlers<Pod>) => (handlers = h) } as unknown as Informer<Pod>;
  const owners = { get: (k: string) => (k === 'ns/web' ? rs : undefined), list: () => [rs] } as unknown as Informer<ReplicaSet>;
  const now: string[] = [];
  const batched: string[] = [];
  watchOwnedPods<ReplicaSet>({
    kind: 'ReplicaSet',
    owners,
    pods,
    expectations,
    enqueue: (o) => now.push(o.metadata.name!),
    selector: (o) => workloadSelector(o.spec?.selector),
    podUpdateMatters: replicaCountsMayChange,
    enqueueBatched: (o) => batched.push(o.metadata.name!),
  });
  return { h: handlers!, seen: () => ({ now: now.splice(0), batched: batched.splice(0) }) };
}

describe('a ReplicaSet woken by its pods', () => {
  it('wakes at once for what it waits on, batched for counts that may move, not at all otherwise', () => {
    const { h, seen } = wire();

    h.add!(pod());
    assert.deepEqual(seen(), { now: ['web'], batched: [] }, 'a creation is what expectations wait for');
    // Bound, then its containers waiting: nothing the ReplicaSet counts.
    h.update!(pod(), pod((p) => (p.spec!.nodeName = 'n1')));
    h.update!(pod((p) => (p.spec!.nodeName = 'n1')), pod((p) => ((p.spec!.nodeName = 'n1'), (p.status = { phase: 'Pending', podIP: '10.0.0.2', conditions: [{ type: 'Ready', status: 'False' }] }))));
    assert.deepEqual(seen(), { now: [], batched: [] });
    // Ready: its readyReplicas moves, after the batch period.
    h.update!(pod(), pod(ready('2026-12-07T00:00:00Z')));
    assert.deepEqual(seen(), { now: [], batched: ['web'] });
    // Ready again since another time (it was unready in between): availability moves.
    h.update!(pod(ready('2026-12-07T00:00:00Z')), pod(ready('2026-12-07T00:01:00Z')));
    assert.deepEqual(seen(), { now: [], batched: ['web'] });
    // Finished: no longer active.
    h.update!(pod(ready('2026-12-07T00:00:00Z')), pod((p) => (p.status = { phase: 'Succeeded' })));
    assert.deepEqual(seen(), { now: [], batched: ['web'] });
    // Relabelled or released: at once, as adoption and release are decided on labels and owners.
    h.update!(pod(), pod((p) => (p.metadata.labels = { app: 'web', extra: 'x' })));
    assert.deepEqual(seen(), { now: ['web'], batched: [] });
    // Deleted: at once (expectations wait for deletions too).
    h.update!(pod(), pod((p) => (p.metadata.deletionTimestamp = '2026-12-07T00:00:00Z')));
    assert.deepEqual(seen(), { now: ['web'], batched: [] });
  });

  it('wakes once a batch of its own creations or deletions is all seen, and batched before', () => {
    const expectations = new Expectations(new FakeClock());
    const { h, seen } = wire(expectations);
    const named = (name: string) => pod((p) => (p.metadata.name = name));

    expectations.expect('ns/web', 3);
    h.add!(named('web-1'));
    h.add!(named('web-2'));
    assert.deepEqual(seen(), { now: [], batched: ['web', 'web'] }, 'only its counts move while it waits for more');
    h.add!(named('web-3'));
    assert.deepEqual(seen(), { now: ['web'], batched: [] }, 'the last one it waited for lets it act again');

    expectations.expect('ns/web', 0, ['ns/web-1', 'ns/web-2']);
    h.delete!(named('web-1'));
    assert.deepEqual(seen(), { now: [], batched: ['web'] });
    h.update!(named('web-2'), pod((p) => ((p.metadata.name = 'web-2'), (p.metadata.deletionTimestamp = '2026-12-07T00:00:00Z'))));
    assert.deepEqual(seen(), { now: ['web'], batched: [] });
  });
});

describe('a ReplicaSet woken by its own updates', () => {
  const updated = (change: (r: ReplicaSet) => void): ReplicaSet => {
    const r = structuredClone({ ...rs, metadata: { ...rs.metadata, generation: 2, resourceVersion: '7', labels: { app: 'web' } } });
    change(r);
    return r;
  };
  const before = updated(() => {});

  it('batches a write of its status only, and acts at once on spec, deletion, labels or owners', () => {
    assert.equal(statusOnly(before, updated((r) => ((r.metadata.resourceVersion = '8'), (r.status = { replicas: 3, readyReplicas: 2 })))), true);
    assert.equal(statusOnly(before, updated((r) => ((r.metadata.generation = 3), (r.spec!.replicas = 5)))), false);
    assert.equal(statusOnly(before, updated((r) => (r.metadata.deletionTimestamp = '2026-12-07T00:00:00Z'))), false);
    assert.equal(statusOnly(before, updated((r) => (r.metadata.labels = { app: 'web', tier: 'x' }))), false);
    assert.equal(statusOnly(before, updated((r) => (r.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: 'd-1', controller: true }]))), false);
    // A kind without a generation cannot tell spec from status: at once.
    const noGen = updated((r) => delete r.metadata.generation);
    assert.equal(statusOnly(noGen, noGen), false);
  });
});
