// The scheduler's VolumeBinding: which nodes a pod's claims allow, what it refuses before looking
// at any node, and what it writes before binding (a free volume pre-bound, or the node selected).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { nodeAffinityFor } from '../../src/api/kinds/volume-provisioning.js';
import { NodeInfo } from '../../src/scheduler/node-info.js';
import { preBindWrite, REASON_VOLUME_BIND_CONFLICT, REASON_VOLUME_NODE_CONFLICT, UNBOUND_IMMEDIATE_MESSAGE, VolumeView, type Lookup, type PodVolumes } from '../../src/scheduler/volume-binding.js';
import { makeNode } from './fixtures.js';

function lookup<T extends KubeObject>(items: T[], key: (o: T) => string = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name!)): Lookup<T> {
  return { get: (k: string) => items.find((o) => key(o) === k), list: () => items };
}

const claim = (name: string, cls: string, extra: { volumeName?: string; annotations?: Record<string, string>; deleting?: boolean } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, resourceVersion: '7', ...(extra.annotations ? { annotations: extra.annotations } : {}), ...(extra.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { storageClassName: cls, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...(extra.volumeName ? { volumeName: extra.volumeName } : {}) },
  status: { phase: extra.volumeName ? 'Bound' : 'Pending' },
});
const volume = (name: string, cls: string, node?: string, claimRef?: unknown): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, resourceVersion: '3' },
  spec: { storageClassName: cls, capacity: { storage: '2Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/v/${name}` }, ...(node ? { nodeAffinity: nodeAffinityFor(node) } : {}), ...(claimRef ? { claimRef } : {}) },
  status: { phase: claimRef ? 'Bound' : 'Available' },
});
const storageClass = (name: string, provisioner: string, mode = 'WaitForFirstConsumer'): KubeObject => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, provisioner, volumeBindingMode: mode });
const pod = (...claims: string[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default' },
  spec: { containers: [{ name: 'c', image: 'x' }], volumes: claims.map((c, i) => ({ name: `v${i}`, persistentVolumeClaim: { claimName: c } })) },
});
const nodeInfo = (name: string): NodeInfo => {
  const ni = new NodeInfo(name);
  ni.setNode(makeNode(name));
  return ni;
};

const CLASSES = [storageClass('local-path', 'rancher.io/local-path'), storageClass('manual', 'kubernetes.io/no-provisioner'), storageClass('now', 'rancher.io/local-path', 'Immediate')];
const NODES: Node[] = [makeNode('a'), makeNode('b')];

function view(claims: KubeObject[], volumes: KubeObject[]): VolumeView {
  return new VolumeView(lookup(claims), lookup(volumes), lookup(CLASSES), lookup(NODES));
}

function volumesOf(v: VolumeView, p: Pod): PodVolumes {
  const r = v.preFilter(p);
  assert.ok('volumes' in r && r.volumes, JSON.stringify(r));
  return r.volumes;
}

describe('scheduler VolumeBinding', () => {
  it('refuses before any node: a missing or deleted claim, an unbound Immediate claim', () => {
    const v = view([claim('gone', 'local-path', { deleting: true }), claim('later', 'now')], []);
    assert.deepEqual(v.preFilter(pod('nope')), { unschedulable: 'persistentvolumeclaim "nope" not found' });
    assert.deepEqual(v.preFilter(pod('gone')), { unschedulable: 'persistentvolumeclaim "gone" is being deleted' });
    assert.deepEqual(v.preFilter(pod('later')), { unschedulable: UNBOUND_IMMEDIATE_MESSAGE });
    assert.deepEqual(v.preFilter(pod()), { volumes: undefined });
  });

  it("sends a pod whose claim is bound to its volume's node, and only there", () => {
    const v = view([claim('data', 'local-path', { volumeName: 'pv-a' })], [volume('pv-a', 'local-path', 'a', { name: 'data', namespace: 'default' })]);
    const vols = volumesOf(v, pod('data'));
    assert.equal(v.filter(vols, nodeInfo('a')), undefined);
    assert.deepEqual(v.filter(vols, nodeInfo('b'))?.reasons, [REASON_VOLUME_NODE_CONFLICT]);
    assert.equal(v.filter(vols, nodeInfo('b'))?.unresolvable, true);
  });

  it('lets a WaitForFirstConsumer claim go where a provisioner can make its volume, or where a free volume is', () => {
    const v = view([claim('fresh', 'local-path'), claim('manual', 'manual')], [volume('static-b', 'manual', 'b')]);
    const provisioned = volumesOf(v, pod('fresh'));
    assert.equal(v.filter(provisioned, nodeInfo('a')), undefined);
    assert.equal(v.filter(provisioned, nodeInfo('b')), undefined);
    const manual = volumesOf(v, pod('manual'));
    assert.deepEqual(v.filter(manual, nodeInfo('a'))?.reasons, [REASON_VOLUME_BIND_CONFLICT]);
    assert.equal(v.filter(manual, nodeInfo('b')), undefined);
  });

  it('keeps a claim already selected to a node on that node', () => {
    const v = view([claim('picked', 'local-path', { annotations: { 'volume.kubernetes.io/selected-node': 'a' } })], []);
    const vols = volumesOf(v, pod('picked'));
    assert.equal(v.filter(vols, nodeInfo('a')), undefined);
    assert.deepEqual(v.filter(vols, nodeInfo('b'))?.reasons, [REASON_VOLUME_BIND_CONFLICT]);
  });

  it('pre-binds a free volume of the node, else selects the node for the provisioner', () => {
    const manual = claim('manual', 'manual');
    const fresh = claim('fresh', 'local-path');
    const v = view([manual, fresh], [volume('static-b', 'manual', 'b')]);
    assert.deepEqual(preBindWrite(v, manual, 'b'), {
      path: '/api/v1/persistentvolumes/static-b',
      patch: { metadata: { resourceVersion: '3' }, spec: { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'default', name: 'manual', uid: 'uid-manual', resourceVersion: '7' } } },
    });
    assert.deepEqual(preBindWrite(v, fresh, 'a'), {
      path: '/api/v1/namespaces/default/persistentvolumeclaims/fresh',
      patch: { metadata: { resourceVersion: '7', annotations: { 'volume.kubernetes.io/selected-node': 'a' } } },
    });
    // Nothing to write once the claim names the node.
    assert.equal(preBindWrite(v, claim('fresh', 'local-path', { annotations: { 'volume.kubernetes.io/selected-node': 'a' } }), 'a'), undefined);
  });
});
