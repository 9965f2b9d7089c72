// The local-path provisioner's decisions: which claims this node provisions, the volume it makes
// for one, and which volumes it reclaims (and never a directory outside its own).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { localPathStorageClass, nodeAffinityFor } from '../../src/api/kinds/volume-provisioning.js';
import { localPathVolume, provisionSkipReason, reclaimTarget } from '../../src/agent/volumes/local-path-provisioner.js';

const ROOT = '/var/lib/skiff/agent/storage';
const CLASS = localPathStorageClass();

function claim(o: { node?: string; provisioner?: string; modes?: string[]; mode?: string; storage?: string | null; volumeName?: string } = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: 'data-web-0',
      namespace: 'shop',
      uid: 'u1',
      resourceVersion: '5',
      annotations: { 'volume.kubernetes.io/selected-node': o.node ?? 'a', 'volume.kubernetes.io/storage-provisioner': o.provisioner ?? 'rancher.io/local-path' },
    },
    spec: {
      storageClassName: 'local-path',
      accessModes: o.modes ?? ['ReadWriteOnce'],
      ...(o.mode ? { volumeMode: o.mode } : {}),
      resources: o.storage === null ? {} : { requests: { storage: o.storage ?? '5Gi' } },
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
    },
  };
}

function made(c: KubeObject, cls = CLASS): KubeObject {
  const r = localPathVolume(c, cls, 'a', ROOT);
  assert.ok('volume' in r, JSON.stringify(r));
  return r.volume;
}

describe('local-path provisioner', () => {
  it('provisions only claims handed to it, of a local-path class, selected to this node and not yet bound', () => {
    assert.equal(provisionSkipReason(claim(), CLASS, 'a'), undefined);
    assert.equal(provisionSkipReason(claim({ node: 'b' }), CLASS, 'a'), 'selected to another node');
    assert.equal(provisionSkipReason(claim({ provisioner: 'ebs.csi.aws.com' }), CLASS, 'a'), 'not handed to the local-path provisioner');
    assert.equal(provisionSkipReason(claim(), { ...CLASS, provisioner: 'other' }, 'a'), 'its class is not a local-path class');
    assert.equal(provisionSkipReason(claim(), undefined, 'a'), 'its class is not a local-path class');
    assert.equal(provisionSkipReason(claim({ volumeName: 'pvc-u1' }), CLASS, 'a'), 'already bound');
  });

  it("makes a hostPath volume on this node: the claim's request, the class's reclaim policy, pre-bound to the claim", () => {
    const r = localPathVolume(claim(), CLASS, 'a', ROOT);
    assert.ok('volume' in r);
    assert.equal(r.dir, `${ROOT}/pvc-u1_shop_data-web-0`);
    assert.deepEqual(r.volume, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-u1', annotations: { 'pv.kubernetes.io/provisioned-by': 'rancher.io/local-path' } },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Delete',
        storageClassName: 'local-path',
        volumeMode: 'Filesystem',
        hostPath: { path: r.dir, type: 'DirectoryOrCreate' },
        nodeAffinity: nodeAffinityFor('a'),
        claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'shop', name: 'data-web-0', uid: 'u1', resourceVersion: '5' },
      },
    });
    assert.equal((made(claim(), { ...CLASS, reclaimPolicy: 'Retain' }).spec as { persistentVolumeReclaimPolicy: string }).persistentVolumeReclaimPolicy, 'Retain');
  });

  it('refuses what one directory on one node cannot be', () => {
    assert.match((localPathVolume(claim({ modes: ['ReadWriteMany'] }), CLASS, 'a', ROOT) as { error: string }).error, /^access mode ReadWriteMany is not supported/);
    assert.match((localPathVolume(claim({ mode: 'Block' }), CLASS, 'a', ROOT) as { error: string }).error, /volumeMode Block is not supported/);
    assert.match((localPathVolume(claim({ storage: null }), CLASS, 'a', ROOT) as { error: string }).error, /requests no storage/);
  });

  it('reclaims its own Released Delete volumes on this node, never a directory outside its root', () => {
    const released = (v: KubeObject, patch: Record<string, unknown> = {}): KubeObject => ({ ...v, spec: { ...(v.spec as object), ...patch }, status: { phase: 'Released' } });
    const v = made(claim());
    assert.deepEqual(reclaimTarget(released(v), 'a', ROOT), { dir: `${ROOT}/pvc-u1_shop_data-web-0` });
    assert.equal(reclaimTarget({ ...v, status: { phase: 'Bound' } }, 'a', ROOT), undefined, 'still bound');
    assert.equal(reclaimTarget(released(v, { persistentVolumeReclaimPolicy: 'Retain' }), 'a', ROOT), undefined, 'Retain keeps it');
    assert.equal(reclaimTarget(released(v), 'b', ROOT), undefined, "another node's volume");
    assert.equal(reclaimTarget(released(v, { hostPath: { path: '/' } }), 'a', ROOT), undefined, 'outside the root');
    assert.equal(reclaimTarget(released(v, { hostPath: { path: `${ROOT}/../../etc` } }), 'a', ROOT), undefined, 'escaping the root');
    assert.equal(reclaimTarget({ ...released(v), metadata: { name: 'pvc-u1' } }, 'a', ROOT), undefined, 'not made by this provisioner');
  });
});
