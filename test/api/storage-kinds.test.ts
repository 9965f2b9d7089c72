import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lines, make } from '../support/kind-checks.js';
import type { KubeObject } from '../../src/api/types.js';
import { persistentVolumeResource } from '../../src/api/kinds/persistentvolume.js';
import { persistentVolumeClaimResource } from '../../src/api/kinds/persistentvolumeclaim.js';
import { podTemplateResource } from '../../src/api/kinds/podtemplate.js';

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const created = new Date(NOW - 5 * 60_000).toISOString();

test('persistent volume defaults, validation and table', () => {
  const pv = make(persistentVolumeResource, {
    metadata: { name: 'pv1', creationTimestamp: created },
    spec: { capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], hostPath: { path: '/data' }, storageClassName: 'manual' },
  });
  const spec = pv.spec as Record<string, unknown>;
  assert.equal(spec.persistentVolumeReclaimPolicy, 'Retain');
  assert.equal(spec.volumeMode, 'Filesystem');
  assert.equal((pv.status as Record<string, unknown>).phase, 'Pending');
  assert.deepEqual(lines(persistentVolumeResource.validate(pv, undefined)), []);
  assert.deepEqual(persistentVolumeResource.table.cells(pv, NOW), ['pv1', '10Gi', 'RWO,ROX', 'Retain', 'Pending', '', 'manual', '<unset>', '', '5m', 'Filesystem']);

  const bad = make(persistentVolumeResource, {
    metadata: { name: 'pv2' },
    spec: { capacity: { storage: '0' }, accessModes: ['ReadWriteOncePod', 'ReadWriteMany', 'Sometimes'], hostPath: { path: '/a/../b' }, nfs: { server: 's', path: '/x' }, persistentVolumeReclaimPolicy: 'Keep' },
  });
  assert.deepEqual(lines(persistentVolumeResource.validate(bad, undefined)), [
    'spec.accessModes: Unsupported value: "Sometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
    'spec.capacity[storage]: Invalid value: "0": must be greater than zero',
    `spec.hostPath.path: Invalid value: "/a/../b": must not contain '..'`,
    'spec.nfs: Forbidden: may not specify more than 1 volume type',
    'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
  ]);
  const empty = make(persistentVolumeResource, { metadata: { name: 'pv3' }, spec: { local: { path: '/mnt' } } });
  assert.deepEqual(lines(persistentVolumeResource.validate(empty, undefined)), [
    'spec.accessModes: Required value',
    'spec.capacity: Required value',
    'spec.capacity: Unsupported value: core.ResourceList{}: supported values: "storage"',
    'spec.nodeAffinity: Required value: Local volume requires node affinity',
  ]);
  const moved = structuredClone(pv);
  (moved.spec as any).hostPath = { path: '/elsewhere' };
  assert.deepEqual(lines(persistentVolumeResource.validate(moved, pv)), ['spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation']);
});

test('persistent volume claim defaults, validation, immutability and table', () => {
  const pvc = make(persistentVolumeClaimResource, {
    metadata: { name: 'data', namespace: 'd', creationTimestamp: created },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'manual' },
    status: { phase: 'Bound' },
  });
  assert.equal((pvc.spec as Record<string, unknown>).volumeMode, 'Filesystem');
  assert.deepEqual(pvc.status, { phase: 'Pending' });
  assert.deepEqual(lines(persistentVolumeClaimResource.validate(pvc, undefined)), []);
  assert.deepEqual(persistentVolumeClaimResource.table.cells(pvc, NOW), ['data', 'Pending', '', '', '', 'manual', '<unset>', '5m', 'Filesystem']);
  const bound: KubeObject = { ...structuredClone(pvc), spec: { ...(pvc.spec as object), volumeName: 'pv1' }, status: { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] } };
  assert.deepEqual(lines(persistentVolumeClaimResource.validate(bound, pvc)), []);
  assert.deepEqual(persistentVolumeClaimResource.table.cells(bound, NOW), ['data', 'Bound', 'pv1', '10Gi', 'RWO', 'manual', '<unset>', '5m', 'Filesystem']);
  const changed = structuredClone(bound);
  (changed.spec as any).storageClassName = 'fast';
  (changed.spec as any).resources.requests.storage = '512Mi';
  assert.deepEqual(lines(persistentVolumeClaimResource.validate(changed, bound)), [
    'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
    'spec.resources.requests.storage: Forbidden: field can not be less than previous value',
  ]);
  const bad = make(persistentVolumeClaimResource, { metadata: { name: 'x', namespace: 'd' }, spec: { volumeMode: 'Raw' } });
  assert.deepEqual(lines(persistentVolumeClaimResource.validate(bad, undefined)), [
    'spec.accessModes: Required value: at least 1 access mode is required',
    'spec.resources[storage]: Required value',
    'spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"',
  ]);
});

test('pod template defaults its pod spec and prints containers and labels', () => {
  const pt = make(podTemplateResource, {
    metadata: { name: 'tpl', namespace: 'd' },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  });
  assert.equal((pt.template as any).spec.restartPolicy, 'Always');
  assert.deepEqual(lines(podTemplateResource.validate(pt, undefined)), []);
  assert.deepEqual(podTemplateResource.table.cells(pt, NOW), ['tpl', 'c', 'nginx', 'app=web']);
  const bad = make(podTemplateResource, { metadata: { name: 'tpl', namespace: 'd' }, template: { spec: {} } });
  assert.deepEqual(lines(podTemplateResource.validate(bad, undefined)), ['template.spec.containers: Required value']);
});

import { storageClassResource } from '../../src/api/kinds/storageclass.js';
import { csiDriverResource } from '../../src/api/kinds/csidriver.js';
import { csiNodeResource } from '../../src/api/kinds/csinode.js';
import { volumeAttachmentResource } from '../../src/api/kinds/volumeattachment.js';

test('storage class: defaults, the default marker, and what may not change', () => {
  const sc = make(storageClassResource, {
    metadata: { name: 'local-path', creationTimestamp: created, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'rancher.io/local-path',
    parameters: { a: 'b' },
  });
  assert.equal(sc.reclaimPolicy, 'Delete');
  assert.equal(sc.volumeBindingMode, 'Immediate');
  assert.deepEqual(lines(storageClassResource.validate(sc, undefined)), []);
  assert.deepEqual(storageClassResource.table.cells(sc, NOW), ['local-path (default)', 'rancher.io/local-path', 'Delete', 'Immediate', false, '5m']);
  const changed = { ...structuredClone(sc), provisioner: 'example.com/other', parameters: { a: 'c' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' };
  assert.deepEqual(lines(storageClassResource.validate(changed, sc)), [
    'parameters: Forbidden: updates to parameters are forbidden.',
    'provisioner: Forbidden: updates to provisioner are forbidden.',
    'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
    'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
  ]);
  const bad = make(storageClassResource, { metadata: { name: 'x' }, provisioner: '', reclaimPolicy: 'Recycle', volumeBindingMode: 'Later' });
  assert.deepEqual(lines(storageClassResource.validate(bad, undefined)), [
    'provisioner: Required value',
    'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
    'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
  ]);
});

test('CSI driver defaults and table; CSI node drivers; volume attachment sources', () => {
  const d = make(csiDriverResource, { metadata: { name: 'hostpath.csi.k8s.io' }, spec: { tokenRequests: [{ audience: 'vault' }] } });
  assert.deepEqual(d.spec, {
    attachRequired: true, podInfoOnMount: false, storageCapacity: false, fsGroupPolicy: 'ReadWriteOnceWithFSType',
    requiresRepublish: false, seLinuxMount: false, volumeLifecycleModes: ['Persistent'], tokenRequests: [{ audience: 'vault' }],
  });
  assert.deepEqual(lines(csiDriverResource.validate(d, undefined)), []);
  assert.deepEqual(csiDriverResource.table.cells(d, NOW), ['hostpath.csi.k8s.io', true, false, false, 'vault', false, 'Persistent', '<unknown>']);
  const node = make(csiNodeResource, { metadata: { name: 'n1' }, spec: { drivers: [{ name: 'a.csi', nodeID: 'n1' }, { name: 'a.csi', nodeID: '' }] } });
  assert.deepEqual(lines(csiNodeResource.validate(node, undefined)), ['spec.drivers[1].nodeID: Required value', 'spec.drivers[1].name: Duplicate value: "a.csi"']);
  assert.deepEqual(csiNodeResource.table.cells(node, NOW), ['n1', 2, '<unknown>']);
  const va = make(volumeAttachmentResource, { metadata: { name: 'va' }, spec: { attacher: 'a.csi', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } } });
  assert.deepEqual(lines(volumeAttachmentResource.validate(va, undefined)), []);
  assert.deepEqual(volumeAttachmentResource.table.cells({ ...va, status: { attached: true } }, NOW), ['va', 'a.csi', 'pv1', 'n1', true, '<unknown>']);
  const none = make(volumeAttachmentResource, { metadata: { name: 'va' }, spec: { nodeName: 'n1', source: {} } });
  assert.deepEqual(lines(volumeAttachmentResource.validate(none, undefined)), [
    'spec.attacher: Required value',
    'spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
  ]);
});
