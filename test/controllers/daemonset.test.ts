import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ControllerRevision } from '../../src/api/kinds/controllerrevision.js';
import type { DaemonSet } from '../../src/api/kinds/daemonset.js';
import type { Node, Taint } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { DaemonSetController } from '../../src/controllers/daemonset.js';
import { CONTAINERS, eventually, events, isReady, pods, simulateKubelet, startControllers, startHarness, nsPath, watchAll, type Harness } from './workload-harness.js';

function daemonSet(name: string, nodeGroup: string, updateStrategy?: NonNullable<DaemonSet['spec']>['updateStrategy']): DaemonSet {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: CONTAINERS('agent:1'), nodeSelector: { group: nodeGroup } } },
      ...(updateStrategy ? { updateStrategy } : {}),
    },
  };
}

/** `kubectl rollout status ds/x`: done when every desired node runs an updated, available pod. */
function dsRolledOut(ds: DaemonSet): boolean {
  const s = ds.status;
  if (!s || (ds.metadata.generation ?? 0) > (s.observedGeneration ?? 0)) return false;
  return (s.updatedNumberScheduled ?? 0) >= s.desiredNumberScheduled && (s.numberAvailable ?? 0) >= s.desiredNumberScheduled;
}

describe('DaemonSet controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  // Nodes are cluster-wide; each test labels its own with `group` and selects only those.
  const createNode = (name: string, group: string, spec: { taints?: Taint[]; unschedulable?: boolean } = {}) =>
    h.client.create<Node>('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { group, 'kubernetes.io/hostname': name } }, spec });
  const getDS = (ns: string, name: string) => h.client.get<DaemonSet>(nsPath(ns, 'daemonsets', name));
  const byNode = (ps: Pod[]) => new Map(ps.map((p) => [p.spec?.nodeName ?? '', p]));

  it('runs one pod per eligible node, follows nodes that join, get tainted, and leave', async () => {
    const ns = await h.namespace('ds-place');
    const g = ns;
    await createNode(`${g}-a`, g);
    await createNode(`${g}-cordoned`, g, { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] });
    await createNode(`${g}-tainted`, g, { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    await createNode(`${g}-other`, `${g}-elsewhere`);
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new DaemonSetController()]);
    try {
      const ds = await h.client.create<DaemonSet>(nsPath(ns, 'daemonsets'), daemonSet('agent', g));
      const placed = await eventually(async () => {
        const ps = await pods(h.client, ns);
        return ps.length === 2 && ps.every(isReady) && ps;
      }, 5000, 'two daemon pods');
      assert.deepEqual([...byNode(placed).keys()].sort(), [`${g}-a`, `${g}-cordoned`]);
      for (const p of placed) {
        const node = p.spec!.nodeName!;
        assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: ds.metadata.uid, controller: true, blockOwnerDeletion: true }]);
        assert.deepEqual(p.spec?.affinity, {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } },
        });
        const tolerations = (p.spec?.tolerations ?? []).map((t) => `${t.key}:${t.operator}:${t.effect}:${t.tolerationSeconds ?? '-'}`);
        for (const t of [
          'node.kubernetes.io/not-ready:Exists:NoExecute:-',
          'node.kubernetes.io/unreachable:Exists:NoExecute:-',
          'node.kubernetes.io/disk-pressure:Exists:NoSchedule:-',
          'node.kubernetes.io/memory-pressure:Exists:NoSchedule:-',
          'node.kubernetes.io/pid-pressure:Exists:NoSchedule:-',
          'node.kubernetes.io/unschedulable:Exists:NoSchedule:-',
        ]) {
          assert.ok(tolerations.includes(t), `toleration ${t} in ${tolerations.join(' ')}`);
        }
        assert.ok(!tolerations.some((t) => t.startsWith('node.kubernetes.io/network-unavailable')), 'network-unavailable only for hostNetwork');
        assert.ok(p.metadata.labels?.['controller-revision-hash']);
        assert.equal(p.metadata.labels?.['pod-template-generation'], '1');
      }
      await eventually(async () => {
        const s = (await getDS(ns, 'agent')).status;
        return s?.desiredNumberScheduled === 2 && s.currentNumberScheduled === 2 && s.numberReady === 2 && s.numberAvailable === 2 && s.updatedNumberScheduled === 2 && s.numberMisscheduled === 0;
      }, 5000, 'status 2/2');

      // A node joins.
      await createNode(`${g}-late`, g);
      await eventually(async () => byNode(await pods(h.client, ns)).has(`${g}-late`), 5000, 'pod on the late node');
      await eventually(async () => (await getDS(ns, 'agent')).status?.desiredNumberScheduled === 3, 5000, 'desired 3');

      // A NoExecute taint the pod does not tolerate evicts it; NoSchedule would not have.
      await h.client.patch(`/api/v1/nodes/${g}-a`, { spec: { taints: [{ key: 'maintenance', effect: 'NoExecute' }] } }, 'merge');
      await eventually(async () => !byNode(await pods(h.client, ns)).has(`${g}-a`), 5000, 'pod gone from the NoExecute node');
      await h.client.patch(`/api/v1/nodes/${g}-tainted`, { spec: { taints: [{ key: 'other', effect: 'PreferNoSchedule' }] } }, 'merge');
      await eventually(async () => byNode(await pods(h.client, ns)).has(`${g}-tainted`), 5000, 'pod once the taint is lifted');

      // A Node deleted: its pod is pod GC's business (after a quarantine); a node re-registering keeps it.
      const latePod = byNode(await pods(h.client, ns)).get(`${g}-late`)!;
      await h.client.delete(`/api/v1/nodes/${g}-late`);
      await eventually(async () => (await getDS(ns, 'agent')).status?.desiredNumberScheduled === 2, 5000, 'desired 2 without the node');
      await createNode(`${g}-late`, g);
      await eventually(async () => (await getDS(ns, 'agent')).status?.desiredNumberScheduled === 3 && (await getDS(ns, 'agent')).status?.currentNumberScheduled === 3, 5000, 'node back');
      const onLate = (await pods(h.client, ns)).filter((p) => p.spec?.nodeName === `${g}-late`);
      assert.deepEqual(onLate.map((p) => p.metadata.uid), [latePod.metadata.uid], 'the same pod, no duplicate');

      const evs = await events(h.client, ns, 'agent');
      assert.ok(evs.some((e) => e.reason === 'SuccessfulCreate'));
      assert.ok(evs.some((e) => e.reason === 'SuccessfulDelete'));
    } finally {
      running.stop();
      kubelet.stop();
    }
  });

  for (const [label, strategy, minAvailableNodes] of [
    ['maxUnavailable 1', { type: 'RollingUpdate' as const, rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } }, 2],
    ['maxSurge 1', { type: 'RollingUpdate' as const, rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } }, 3],
  ] as const) {
    it(`rolls a template change over the nodes (${label})`, async () => {
      const ns = await h.namespace('ds-roll');
      const g = ns;
      for (const n of ['a', 'b', 'c']) await createNode(`${g}-${n}`, g);
      const kubelet = simulateKubelet(h.client, ns);
      const running = startControllers(h.client, [new DaemonSetController()]);
      const violations: string[] = [];
      let watcher: { stop(): void } | undefined;
      try {
        await h.client.create(nsPath(ns, 'daemonsets'), daemonSet('roll', g, strategy));
        await eventually(async () => dsRolledOut(await getDS(ns, 'roll')) && (await getDS(ns, 'roll')).status?.desiredNumberScheduled === 3, 5000, 'initial rollout');
        watcher = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
          const nodesUp = new Set(all.filter((p) => isReady(p) && !p.metadata.deletionTimestamp).map((p) => p.spec?.nodeName));
          if (nodesUp.size < minAvailableNodes) violations.push(`nodes with an available pod: ${nodesUp.size}`);
        });
        await h.client.patch(nsPath(ns, 'daemonsets', 'roll'), { spec: { template: { spec: { containers: CONTAINERS('agent:2') } } } }, 'strategic');
        await eventually(async () => {
          const ds = await getDS(ns, 'roll');
          const ps = await pods(h.client, ns);
          return dsRolledOut(ds) && ps.length === 3 && ps.every((p) => p.spec?.containers[0]?.image === 'agent:2' && p.metadata.labels?.['pod-template-generation'] === '2');
        }, 10_000, 'rolled out');
        assert.deepEqual(violations, []);
        const ps = await pods(h.client, ns);
        assert.equal(new Set(ps.map((p) => p.spec?.nodeName)).size, 3, 'one pod per node');
      } finally {
        watcher?.stop();
        running.stop();
        kubelet.stop();
      }
    });
  }

  it('keeps a ControllerRevision per template: a rollback renumbers the old one, history is trimmed to revisionHistoryLimit', async () => {
    const ns = await h.namespace('ds-history');
    const g = ns;
    for (const n of ['a', 'b']) await createNode(`${g}-${n}`, g);
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new DaemonSetController()]);
    const revisions = async () => (await h.client.list<ControllerRevision>(nsPath(ns, 'controllerrevisions'), {})).items.sort((a, b) => (a.revision ?? 0) - (b.revision ?? 0));
    const image = (r: ControllerRevision) => ((r.data as { spec: { template: { spec: { containers: { image: string }[] } } } }).spec.template.spec.containers[0]!.image);
    const setImage = (tag: string) => h.client.patch(nsPath(ns, 'daemonsets', 'hist'), { spec: { template: { spec: { containers: CONTAINERS(tag) } } } }, 'strategic');
    const rolledTo = async (tag: string) => {
      const ps = await pods(h.client, ns);
      return dsRolledOut(await getDS(ns, 'hist')) && ps.length === 2 && ps.every((p) => p.spec?.containers[0]?.image === tag);
    };
    try {
      const created = await h.client.create<DaemonSet>(nsPath(ns, 'daemonsets'), { ...daemonSet('hist', g), metadata: { name: 'hist', annotations: { 'kubernetes.io/change-cause': 'first' } } });
      await eventually(async () => (await revisions()).length === 1 && (await rolledTo('agent:1')), 5000, 'revision 1');
      const [first] = await revisions();
      const hash = first!.metadata.labels?.['controller-revision-hash'];
      assert.equal(first!.revision, 1);
      assert.equal(first!.metadata.name, `hist-${hash}`);
      assert.equal(first!.metadata.labels?.app, 'hist', 'template labels, so the selector finds it');
      assert.equal(first!.metadata.annotations?.['kubernetes.io/change-cause'], 'first');
      assert.deepEqual(first!.metadata.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]), [['DaemonSet', created.metadata.uid, true]]);
      assert.equal((first!.data as { spec: { template: { $patch: string } } }).spec.template.$patch, 'replace');
      assert.ok((await pods(h.client, ns)).every((p) => p.metadata.labels?.['controller-revision-hash'] === hash), 'pods carry the revision hash');

      await setImage('agent:2');
      await eventually(async () => (await revisions()).length === 2 && (await rolledTo('agent:2')), 10_000, 'revision 2');
      // What `kubectl rollout undo` does: patch the DaemonSet with the previous revision's data.
      await h.client.patch(nsPath(ns, 'daemonsets', 'hist'), first!.data, 'strategic');
      await eventually(async () => (await rolledTo('agent:1')) && (await revisions()).map((r) => [r.revision, image(r)]).join() === [[2, 'agent:2'], [3, 'agent:1']].join(), 10_000, 'rolled back: the first template is revision 3');
      assert.equal((await revisions()).find((r) => r.revision === 3)?.metadata.uid, first!.metadata.uid, 'renumbered, not copied');

      // revisionHistoryLimit 1: only the current revision and the newest old one stay.
      await h.client.patch(nsPath(ns, 'daemonsets', 'hist'), { spec: { revisionHistoryLimit: 1 } }, 'merge');
      await setImage('agent:3');
      await eventually(async () => (await rolledTo('agent:3')) && (await revisions()).map((r) => [r.revision, image(r)]).join() === [[3, 'agent:1'], [4, 'agent:3']].join(), 10_000, 'trimmed to one old revision');

      // A revision deleted by hand comes back.
      const current = (await revisions()).find((r) => r.revision === 4)!;
      await h.client.delete(nsPath(ns, 'controllerrevisions', current.metadata.name!));
      await eventually(async () => (await revisions()).some((r) => image(r) === 'agent:3' && r.metadata.uid !== current.metadata.uid), 5000, 'current revision recreated');
    } finally {
      running.stop();
      kubelet.stop();
    }
  });
});
