// The autoscaler's decisions on snapshots: how many nodes of which group the pending pods need,
// and which nodes can go because their pods fit elsewhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { clusterHealthy } from '../../src/cloud/autoscaler/autoscaler.js';
import { filterOutSchedulable, nodeInfoWith, planScaleUp, scaleDownBlocker, scaleDownCandidates, utilization, type GroupSnapshot } from '../../src/cloud/autoscaler/plan.js';

function node(name: string, cpu: string, memory: string, labels: Record<string, string> = {}): Node {
  const capacity = { cpu, memory, pods: '110' };
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec: {}, status: { capacity, allocatable: capacity, conditions: [{ type: 'Ready', status: 'True' }] } } as Node;
}

function pod(name: string, cpu: string, extra: Partial<Pod['spec']> = {}, nodeName?: string): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}` },
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory: '128Mi' } } }], ...(nodeName ? { nodeName } : {}), ...extra },
  } as Pod;
}

const group = (id: string, template: Node, target = 0, max = 10): GroupSnapshot => ({ id, min: 0, max, target, template, backedOff: false });

test('scale-up packs the pending pods onto as few template nodes as fit them, within the maximum', () => {
  const pending = [pod('a', '1500m'), pod('b', '1500m'), pod('c', '500m')];
  const r = planScaleUp(pending, [group('small', node('t', '2', '4Gi'))], 'least-waste');
  assert.deepEqual(r.plan && { group: r.plan.group, count: r.plan.count, pods: r.plan.pods.length }, { group: 'small', count: 2, pods: 3 });
  const capped = planScaleUp(pending, [group('small', node('t', '2', '4Gi'), 9, 10)], 'least-waste');
  assert.equal(capped.plan?.count, 1);
  assert.equal(capped.unhelpable.length, 1);
});

test('least-waste picks the group that leaves the least unused; a pod no template takes says why', () => {
  const pending = [pod('a', '1500m'), pod('b', '1500m')];
  const r = planScaleUp(pending, [group('big', node('t1', '16', '64Gi')), group('small', node('t2', '2', '4Gi'))], 'least-waste');
  assert.equal(r.plan?.group, 'small');
  const most = planScaleUp([...pending, pod('huge', '12')], [group('big', node('t1', '16', '64Gi')), group('small', node('t2', '2', '4Gi'))], 'most-pods');
  assert.equal(most.plan?.group, 'big');
  const gpu = planScaleUp([pod('picky', '1', { nodeSelector: { gpu: 'yes' } })], [group('small', node('t2', '2', '4Gi'))], 'least-waste');
  assert.equal(gpu.plan, undefined);
  assert.match(gpu.unhelpable[0]!.reason, /node affinity\/selector/);
  const full = planScaleUp([pod('x', '1')], [group('small', node('t2', '2', '4Gi'), 3, 3)], 'least-waste');
  assert.equal(full.unhelpable[0]!.reason, 'max node group size reached');
});

test('pending pods that fit where nodes already are ask for no new machine, and two do not count on the same room', () => {
  const n1 = node('n1', '2', '4Gi');
  const busy = pod('busy', '1', {}, 'n1');
  const left = filterOutSchedulable([pod('a', '800m'), pod('b', '800m'), pod('picky', '100m', { nodeSelector: { gpu: 'yes' } })], [nodeInfoWith(n1, [busy])]);
  assert.deepEqual(left.map((p) => p.metadata.name), ['b', 'picky']);
});

test('scale-down takes underused nodes whose pods fit on the others, never below the minimum', () => {
  const n1 = node('n1', '2', '4Gi');
  const n2 = node('n2', '2', '4Gi');
  const n3 = node('n3', '2', '4Gi');
  const p1 = pod('p1', '1500m', {}, 'n1');
  const p2 = pod('p2', '200m', {}, 'n2');
  const pods = new Map([['n1', [p1]], ['n2', [p2]], ['n3', []]]);
  assert.equal(utilization(n1, [p1]), 0.75);
  const snaps = [n1, n2, n3].map((n) => ({ node: n, group: 'g', movable: pods.get(n.metadata.name!) ?? [] }));
  const gone = scaleDownCandidates(snaps, pods, new Map([['g', { min: 1, target: 3 }]]), 0.5);
  assert.deepEqual(gone.map((n) => n.metadata.name), ['n2', 'n3']);
  const atMin = scaleDownCandidates(snaps, pods, new Map([['g', { min: 2, target: 3 }]]), 0.5);
  assert.deepEqual(atMin.map((n) => n.metadata.name), ['n2']);
  const blocked = scaleDownCandidates(snaps.map((s) => ({ ...s, blocked: 'pdb' })), pods, new Map([['g', { min: 0, target: 3 }]]), 0.5);
  assert.deepEqual(blocked, []);
});

test('a budget without room, an unsafe or unowned pod, or the node\'s own annotation keeps a node', () => {
  const n = node('n1', '2', '4Gi');
  const owned = (p: Pod): Pod => ({ ...p, metadata: { ...p.metadata, labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }] } });
  const web = owned(pod('web-1', '100m', {}, 'n1'));
  const pdb = (allowed: number) => ({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'web' } } }, status: { disruptionsAllowed: allowed } });
  assert.equal(scaleDownBlocker(n, [web], [pdb(1)]), undefined);
  assert.equal(scaleDownBlocker(n, [web], [pdb(0)]), 'not enough pod disruption budget to move default/web-1');
  assert.equal(scaleDownBlocker(n, [pod('bare', '100m', {}, 'n1')], []), 'pod default/bare has no controller');
  const unsafe = { ...web, metadata: { ...web.metadata, annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' } } };
  assert.equal(scaleDownBlocker(n, [unsafe], []), 'pod default/web-1 is not safe to evict');
  const disabled = { ...n, metadata: { ...n.metadata, annotations: { 'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'true' } } };
  assert.equal(scaleDownBlocker(disabled, [], []), 'scale-down disabled by annotation');
  const scratch = { ...web, spec: { ...web.spec!, volumes: [{ name: 'cache', emptyDir: {} }] } } as Pod;
  assert.equal(scaleDownBlocker(n, [scratch], [pdb(1)]), 'pod default/web-1 has local storage (volume cache)');
  assert.equal(scaleDownBlocker(n, [scratch], [pdb(1)], { skipNodesWithLocalStorage: false }), undefined);
  const declared = { ...scratch, metadata: { ...scratch.metadata, annotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes': 'cache' } } };
  assert.equal(scaleDownBlocker(n, [declared], [pdb(1)]), undefined);
});

test('with more than 45% of the nodes unready (and more than 3) the autoscaler holds back, as upstream', () => {
  const o = { maxTotalUnreadyPercentage: 45, okTotalUnreadyCount: 3 };
  assert.equal(clusterHealthy(4, 3, o), true, 'three unready are always fine');
  assert.equal(clusterHealthy(10, 4, o), true);
  assert.equal(clusterHealthy(10, 5, o), false);
  assert.equal(clusterHealthy(100, 45, o), true);
  assert.equal(clusterHealthy(100, 46, o), false);
});
