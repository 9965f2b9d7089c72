import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { absentTile, nodeTile, podRow, slimPod } from '../../src/dashboard/node-tile.js';

function node(ready: 'True' | 'False' | 'Unknown' | undefined, extra: Partial<Node> = {}): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/worker': '' }, ...(extra.metadata ?? {}) },
    spec: { ...(extra.spec ?? {}) },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
      conditions: ready ? [{ type: 'Ready', status: ready, reason: ready === 'True' ? 'KubeletReady' : 'NodeStatusUnknown', message: ready === 'True' ? 'ready' : 'Kubelet stopped posting node status.', lastTransitionTime: '2026-12-06T10:00:00Z' }] : [],
    },
  } as Node;
}

function pod(name: string, phase: string, cpu: string, extra: Record<string, unknown> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: name, ...(extra.metadata ?? {}) },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu, memory: '64Mi' } } }] },
    status: { phase, containerStatuses: [{ name: 'c', ready: phase === 'Running', restartCount: 2, image: 'busybox', imageID: '' }] },
  } as unknown as Pod;
}

describe('dashboard node tiles', () => {
  it('says what the Node, its Lease and its pods say', () => {
    const t = nodeTile({
      node: node('True', { spec: { unschedulable: true, taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }, metadata: { name: 'n1', annotations: { 'skiff.dev/retire': 'true' }, labels: { 'node-role.kubernetes.io/worker': '' } } } as Partial<Node>),
      lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1' }, spec: { renewTime: '2026-12-06T10:00:05.250000Z' } },
      pods: [pod('a', 'Running', '250m'), pod('b', 'Pending', '500m'), pod('c', 'Succeeded', '1'), pod('d', 'Running', '100m', { metadata: { name: 'd', deletionTimestamp: '2026-12-06T10:00:00Z' } })],
      renewalsPerMinute: 6,
      reregistrations: 2,
    });
    assert.equal(t.health, 'Ready');
    assert.equal(t.cordoned, true);
    assert.equal(t.retiring, true);
    assert.deepEqual(t.roles, ['worker']);
    assert.deepEqual(t.taints, ['dedicated=db:NoSchedule']);
    assert.deepEqual(t.pods, { running: 1, pending: 1, succeeded: 1, failed: 0, terminating: 1 });
    // A finished pod holds nothing; a terminating one still does.
    assert.deepEqual(t.cpu, { requested: 850, allocatable: 4000 });
    assert.equal(t.memory.requested, 3 * 64 * 2 ** 20);
    assert.equal(t.leaseRenewedAt, Date.parse('2026-12-06T10:00:05.250Z'));
    assert.equal(t.reason, undefined, 'a Ready node shows no reason');
    assert.equal(t.reregistrations, 2);
  });

  it('tells Unknown from NotReady, with the condition reason', () => {
    assert.equal(nodeTile({ node: node('False'), pods: [], renewalsPerMinute: 0, reregistrations: 0 }).health, 'NotReady');
    const unknown = nodeTile({ node: node('Unknown'), pods: [], renewalsPerMinute: 0, reregistrations: 0 });
    assert.equal(unknown.health, 'Unknown');
    assert.equal(unknown.reason, 'NodeStatusUnknown: Kubelet stopped posting node status.');
    assert.equal(nodeTile({ node: node(undefined), pods: [], renewalsPerMinute: 0, reregistrations: 0 }).health, 'Unknown', 'no Ready condition yet');
  });

  it('keeps an absent node its name, roles and capacity, nothing running', () => {
    const t = nodeTile({ node: node('True'), pods: [pod('a', 'Running', '1')], renewalsPerMinute: 6, reregistrations: 0 });
    const gone = absentTile(t, 1234);
    assert.equal(gone.health, 'absent');
    assert.equal(gone.absentSince, 1234);
    assert.equal(gone.pods.running, 0);
    assert.equal(gone.cpu.requested, 0);
    assert.equal(gone.cpu.allocatable, 4000);
    assert.deepEqual(gone.roles, ['worker']);
  });

  it('keeps of a pod only what a tile and a pod row need, and they read the same from it', () => {
    const full = pod('a', 'Running', '250m', { metadata: { name: 'a', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'u', controller: true }], labels: { big: 'x'.repeat(1000) } } });
    const slim = slimPod(full);
    assert.ok(JSON.stringify(slim).length < 600, 'small');
    assert.equal(slim.metadata.ownerReferences?.[0]?.kind, 'DaemonSet', 'drain needs the controller');
    assert.deepEqual(podRow(slim), podRow(full));
    assert.deepEqual(podRow(slim), { namespace: 'default', name: 'a', phase: 'Running', ready: '1/1', restarts: 2, terminating: false, containers: ['c'] });
    const a = nodeTile({ node: node('True'), pods: [full], renewalsPerMinute: 0, reregistrations: 0 });
    const b = nodeTile({ node: node('True'), pods: [slim], renewalsPerMinute: 0, reregistrations: 0 });
    assert.deepEqual(a, b);
  });
});
