import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
});
