// DefaultStorageClass admission: a claim without a class gets the default one (the newest of
// several, ties by name); a claim that names a class, even "", keeps its choice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { defaultClassOf, defaultStorageClassAdmission } from '../../src/apiserver/admission/default-storage-class.js';
import { persistentVolumeClaimResource } from '../../src/api/kinds/persistentvolumeclaim.js';
import type { AdmissionAttributes } from '../../src/apiserver/admission/plugin.js';

const cls = (name: string, created: string, isDefault = true): KubeObject => ({
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name, creationTimestamp: created, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
});

function admit(claimSpec: Record<string, unknown>, classes: KubeObject[], annotations?: Record<string, string>): KubeObject {
  const object: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'c', namespace: 'default', ...(annotations ? { annotations } : {}) }, spec: { ...claimSpec } };
  const plugin = defaultStorageClassAdmission(() => classes);
  const a = { operation: 'CREATE', resource: persistentVolumeClaimResource, subresource: '', namespace: 'default', name: 'c', object, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false } as unknown as AdmissionAttributes;
  assert.equal(plugin.handles('CREATE', persistentVolumeClaimResource), true);
  void plugin.mutate?.(a);
  return object;
}

describe('DefaultStorageClass admission', () => {
  it('picks the newest default class, ties by name', () => {
    assert.equal(defaultClassOf([cls('old', '2026-01-01T00:00:00Z'), cls('new', '2026-02-01T00:00:00Z'), cls('plain', '2026-03-01T00:00:00Z', false)])?.metadata.name, 'new');
    assert.equal(defaultClassOf([cls('b', '2026-01-01T00:00:00Z'), cls('a', '2026-01-01T00:00:00Z')])?.metadata.name, 'a');
    assert.equal(defaultClassOf([cls('plain', '2026-01-01T00:00:00Z', false)]), undefined);
  });

  it('fills in a missing class and keeps a chosen one', () => {
    const classes = [cls('local-path', '2026-01-01T00:00:00Z')];
    assert.equal((admit({}, classes).spec as { storageClassName?: string }).storageClassName, 'local-path');
    assert.equal((admit({ storageClassName: null }, classes).spec as { storageClassName?: string }).storageClassName, 'local-path');
    assert.equal((admit({ storageClassName: '' }, classes).spec as { storageClassName?: string }).storageClassName, '');
    assert.equal((admit({ storageClassName: 'fast' }, classes).spec as { storageClassName?: string }).storageClassName, 'fast');
    assert.equal((admit({}, classes, { 'volume.beta.kubernetes.io/storage-class': 'slow' }).spec as { storageClassName?: string }).storageClassName, undefined);
    assert.equal((admit({}, []).spec as { storageClassName?: string }).storageClassName, undefined);
  });
});
