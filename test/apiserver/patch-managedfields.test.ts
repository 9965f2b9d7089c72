import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/api/errors.js';
import type { KubeObject, ManagedFieldsEntry } from '../../src/api/types.js';
import { resourceTypeFor, resourceTypeForKind } from '../../src/api/registry.js';
import { applyServerSide, fieldSetOf, updateManagedFields, LAST_APPLIED_ANNOTATION } from '../../src/apiserver/patch/index.js';

const DEPLOYMENT = resourceTypeFor('apps', 'v1', 'deployments')!;
const T0 = '2024-05-01T10:00:00.000Z';
const T1 = '2024-05-01T10:01:00.000Z';
const T2 = '2024-05-01T10:02:00.000Z';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function manifest(opts: { replicas?: number; labels?: Record<string, string>; containers?: Json[] } = {}): KubeObject {
  const spec: Json = {
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: opts.containers ?? [{ name: 'nginx', image: 'nginx:1.27' }] },
    },
  };
  if (opts.replicas !== undefined) spec.replicas = opts.replicas;
  const metadata: Json = { name: 'web', namespace: 'default' };
  if (opts.labels) metadata.labels = opts.labels;
  return { apiVersion: 'apps/v1', kind: 'Deployment', metadata, spec };
}

function apply(live: KubeObject | undefined, applied: KubeObject, manager: string, now = T0, force = false) {
  return applyServerSide(live, applied, { manager, force, gvk: DEPLOYMENT, now });
}

/** What the store adds on create; apply leaves identity to the registry. */
function stored(obj: KubeObject): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, uid: 'uid-1', resourceVersion: '1', creationTimestamp: '2024-05-01T10:00:00Z', generation: 1 } };
}

function entry(obj: KubeObject, manager: string, operation = 'Apply'): ManagedFieldsEntry | undefined {
  return obj.metadata.managedFields?.find((e) => e.manager === manager && e.operation === operation);
}

function conflictOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return e;
  }
  assert.fail('expected a conflict');
}

test('apply creates the object and records an Apply entry in upstream shape', () => {
  const { object, changed } = apply(undefined, manifest({ replicas: 2, labels: { app: 'web' } }), 'kubectl');
  assert.equal(changed, true);
  assert.equal((object.spec as Json).replicas, 2);
  assert.deepEqual(object.metadata.managedFields, [
    {
      manager: 'kubectl',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      time: '2024-05-01T10:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { 'f:app': {} } },
            'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
          },
        },
      },
    },
  ]);
  const keys = Object.keys(object.metadata.managedFields![0]!);
  assert.deepEqual(keys, ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
});

test('re-applying the same configuration changes nothing, not even the time', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'kubectl').object);
  const again = apply(live, manifest({ replicas: 2 }), 'kubectl', T1);
  assert.equal(again.changed, false);
  assert.deepEqual(again.object, live);
});

test('a changed apply updates the values and the entry time', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'kubectl').object);
  const { object, changed } = apply(live, manifest({ replicas: 3 }), 'kubectl', T1);
  assert.equal(changed, true);
  assert.equal((object.spec as Json).replicas, 3);
  assert.equal(object.metadata.uid, 'uid-1');
  assert.equal(entry(object, 'kubectl')!.time, '2024-05-01T10:01:00Z');
  assert.equal(object.metadata.managedFields!.length, 1);
});

test('a label the applier stops sending is removed', () => {
  const live = stored(apply(undefined, manifest({ labels: { app: 'web', tier: 'fe' } }), 'kubectl').object);
  const { object } = apply(live, manifest({ labels: { app: 'web' } }), 'kubectl', T1);
  assert.deepEqual(object.metadata.labels, { app: 'web' });
  assert.deepEqual((entry(object, 'kubectl')!.fieldsV1 as Json)['f:metadata'], { 'f:labels': { 'f:app': {} } });
  const none = apply(stored(object), manifest(), 'kubectl', T2).object;
  assert.equal(none.metadata.labels, undefined);
});

test('a field the applier stops sending stays when another manager also owns it', () => {
  const created = stored(apply(undefined, manifest({ labels: { app: 'web', tier: 'fe' } }), 'kubectl').object);
  const labeled = { ...created, metadata: { ...created.metadata, labels: { ...created.metadata.labels, tier: 'be' } } };
  updateManagedFields(created, labeled, { manager: 'kubectl-label', operation: 'Update', now: T1, kind: DEPLOYMENT });
  const { object } = apply(labeled, manifest({ labels: { app: 'web' } }), 'kubectl', T2);
  assert.deepEqual(object.metadata.labels, { app: 'web', tier: 'be' });
});

test('two appliers conflict on spec.replicas with upstream wording', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'alice').object);
  const e = conflictOf(() => apply(live, manifest({ replicas: 5 }), 'bob', T1));
  assert.equal(e.code, 409);
  assert.equal(e.status.reason, 'Conflict');
  assert.equal(e.status.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
  assert.deepEqual(e.status.details, { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }] });
});

test('applying the same value as another manager shares ownership instead of conflicting', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'alice').object);
  const { object } = apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } }, 'bob', T1);
  assert.deepEqual(entry(object, 'bob')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.ok((entry(object, 'alice')!.fieldsV1 as Json)['f:spec']['f:replicas']);
  assert.equal(entry(object, 'bob')!.time, undefined, 'nothing changed, so no time');
});

test('force takes ownership of the conflicting field', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'alice').object);
  const { object } = apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 5 } }, 'bob', T1, true);
  assert.equal((object.spec as Json).replicas, 5);
  assert.deepEqual(entry(object, 'bob')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  assert.equal((entry(object, 'alice')!.fieldsV1 as Json)['f:spec']['f:replicas'], undefined);
  // alice now omitting replicas no longer removes it: bob owns it.
  const after = apply(stored(object), manifest(), 'alice', T2).object;
  assert.equal((after.spec as Json).replicas, 5);
});

test('kubectl scale (an Update on the scale subresource) takes replicas; a later apply conflicts', () => {
  const live = stored(apply(undefined, manifest({ replicas: 3 }), 'kubectl').object);
  const scaled = structuredClone(live);
  (scaled.spec as Json).replicas = 5;
  updateManagedFields(live, scaled, { manager: 'kubectl-scale', operation: 'Update', subresource: 'scale', now: T1, kind: DEPLOYMENT });
  const scaleEntry = entry(scaled, 'kubectl-scale', 'Update')!;
  assert.deepEqual(scaleEntry, {
    manager: 'kubectl-scale',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: '2024-05-01T10:01:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    subresource: 'scale',
  });
  assert.equal((entry(scaled, 'kubectl')!.fieldsV1 as Json)['f:spec']['f:replicas'], undefined, 'the applier lost replicas');

  const e = conflictOf(() => apply(scaled, manifest({ replicas: 3 }), 'kubectl', T2));
  assert.equal(e.status.message, 'Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using apps/v1: .spec.replicas');
  assert.deepEqual(e.status.details?.causes, [
    { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-scale" with subresource "scale" using apps/v1', field: '.spec.replicas' },
  ]);
  // Re-applying without replicas is fine: the scaled value stays.
  const ok = apply(scaled, manifest(), 'kubectl', T2).object;
  assert.equal((ok.spec as Json).replicas, 5);
});

test('an Update by kubectl-client-side-apply conflicts with a different applier, with the using clause', () => {
  const created = manifest({ replicas: 1 });
  const obj = stored(structuredClone(created));
  updateManagedFields(undefined, obj, { manager: 'kubectl-client-side-apply', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const e = conflictOf(() => apply(obj, manifest({ replicas: 4 }), 'ci-bot', T1));
  assert.equal(e.status.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas');
});

test('kubectl may take over what client-side apply recorded in last-applied, and keeps the annotation in step', () => {
  const config = manifest({ replicas: 1 });
  const obj = stored(structuredClone(config));
  obj.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: JSON.stringify(config) + '\n' };
  updateManagedFields(undefined, obj, { manager: 'kubectl-client-side-apply', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const { object } = apply(obj, manifest({ replicas: 4 }), 'kubectl', T1);
  assert.equal((object.spec as Json).replicas, 4);
  const annotation = JSON.parse(object.metadata.annotations![LAST_APPLIED_ANNOTATION]!);
  assert.equal(annotation.spec.replicas, 4);
  assert.deepEqual(entry(object, 'kubectl')!.fieldsV1 && (entry(object, 'kubectl')!.fieldsV1 as Json)['f:spec']['f:replicas'], {});
});

test('multiple conflicts are grouped per manager', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2, labels: { app: 'web' } }), 'alice').object);
  const e = conflictOf(() => apply(live, manifest({ replicas: 3, labels: { app: 'api' } }), 'bob', T1));
  assert.equal(e.status.message, 'Apply failed with 2 conflicts: conflicts with "alice":\n- .metadata.labels.app\n- .spec.replicas');
  assert.equal(e.status.details?.causes?.length, 2);
});

test('containers are owned per element', () => {
  const base = stored(apply(undefined, manifest({ containers: [{ name: 'nginx', image: 'nginx:1.27' }] }), 'alice').object);
  const sidecar: KubeObject = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'envoy:1' }] } } },
  };
  const both = stored(apply(base, sidecar, 'bob', T1).object);
  const names = (o: KubeObject) => ((o.spec as Json).template.spec.containers as Json[]).map((c) => c.name);
  assert.deepEqual(names(both), ['nginx', 'sidecar']);
  assert.deepEqual((entry(both, 'bob')!.fieldsV1 as Json)['f:spec']['f:template']['f:spec']['f:containers'], {
    'k:{"name":"sidecar"}': { '.': {}, 'f:image': {}, 'f:name': {} },
  });

  // bob touching alice's container image conflicts on that element's field.
  const grab = structuredClone(sidecar);
  (grab.spec as Json).template.spec.containers.push({ name: 'nginx', image: 'nginx:1.28' });
  const e = conflictOf(() => apply(both, grab, 'bob', T2));
  assert.equal(e.status.details?.causes?.[0]?.field, '.spec.template.spec.containers[name="nginx"].image');

  // alice dropping her container removes it and leaves bob's.
  const withoutNginx = manifest({ containers: [] });
  const after = apply(both, withoutNginx, 'alice', T2).object;
  assert.deepEqual(names(after), ['sidecar']);
});

test('an explicit null in the configuration clears the field', () => {
  const live = stored(apply(undefined, manifest({ replicas: 2 }), 'kubectl').object);
  const cfg = manifest();
  (cfg.spec as Json).replicas = null;
  const { object } = apply(live, cfg, 'kubectl', T1);
  assert.equal('replicas' in (object.spec as Json), false);
  assert.deepEqual((entry(object, 'kubectl')!.fieldsV1 as Json)['f:spec']['f:replicas'], {});
});

test('apply rejects managedFields, wrong versions and a missing manager', () => {
  const withMf = manifest();
  withMf.metadata.managedFields = [];
  let e = conflictOf(() => apply(undefined, withMf, 'kubectl'));
  assert.equal(e.code, 400);
  assert.equal(e.status.message, 'metadata.managedFields must be nil');
  e = conflictOf(() => apply(undefined, { ...manifest(), apiVersion: 'apps/v1beta1' }, 'kubectl'));
  assert.equal(e.status.message, 'Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1');
  e = conflictOf(() => apply(undefined, manifest(), ''));
  assert.equal(e.code, 422);
  e = conflictOf(() => apply(undefined, manifest({ containers: [{ image: 'x' }] }), 'kubectl'));
  assert.equal(e.code, 400);
  assert.match(e.status.message ?? '', /omits key field "name"/);
});

test('status in an applied configuration is not owned on the main resource', () => {
  const cfg = { ...manifest({ replicas: 1 }), status: { replicas: 1 } };
  const { object } = apply(undefined, cfg, 'kubectl');
  assert.equal((entry(object, 'kubectl')!.fieldsV1 as Json)['f:status'], undefined);
});

// ---- updateManagedFields --------------------------------------------------------------------

test('create via Update records defaulted-style fields with upstream markers', () => {
  const obj = stored(manifest({ replicas: 1, labels: { app: 'web' } }));
  (obj.spec as Json).template.spec.containers[0].ports = [{ containerPort: 80, protocol: 'TCP' }];
  obj.status = { replicas: 0 };
  updateManagedFields(undefined, obj, { manager: 'kubectl-create', operation: 'Update', now: T0, kind: DEPLOYMENT });
  assert.deepEqual(obj.metadata.managedFields, [
    {
      manager: 'kubectl-create',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2024-05-01T10:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
        'f:spec': {
          'f:replicas': {},
          'f:selector': {},
          'f:template': {
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
            'f:spec': {
              'f:containers': {
                'k:{"name":"nginx"}': {
                  '.': {},
                  'f:image': {},
                  'f:name': {},
                  'f:ports': { '.': {}, 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
                  'f:resources': {},
                },
              },
            },
          },
        },
      },
    },
  ]);
});

test('an Update moves the fields it changes and keeps one entry per manager', () => {
  const v1 = stored(manifest({ replicas: 1, labels: { app: 'web' } }));
  updateManagedFields(undefined, v1, { manager: 'kubectl-create', operation: 'Update', now: T0, kind: DEPLOYMENT });

  const v2 = structuredClone(v1);
  v2.metadata.labels = { app: 'web', tier: 'fe' };
  updateManagedFields(v1, v2, { manager: 'kubectl-label', operation: 'Update', now: T1, kind: DEPLOYMENT });
  assert.deepEqual(entry(v2, 'kubectl-label', 'Update')!.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:tier': {} } } });

  const v3 = structuredClone(v2);
  v3.metadata.labels = { app: 'api', tier: 'be' };
  updateManagedFields(v2, v3, { manager: 'kubectl-label', operation: 'Update', now: T2, kind: DEPLOYMENT });
  const labelEntries = v3.metadata.managedFields!.filter((e) => e.manager === 'kubectl-label');
  assert.equal(labelEntries.length, 1);
  assert.deepEqual(labelEntries[0]!.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:app': {}, 'f:tier': {} } } });
  assert.equal(labelEntries[0]!.time, '2024-05-01T10:02:00Z');
  // kubectl-create still owns the labels map itself, just none of its entries.
  assert.deepEqual((entry(v3, 'kubectl-create', 'Update')!.fieldsV1 as Json)['f:metadata'], { 'f:labels': {} });

  // A write that changes nothing leaves entries and times alone.
  const v4 = structuredClone(v3);
  updateManagedFields(v3, v4, { manager: 'kubectl-label', operation: 'Update', now: '2024-05-01T11:00:00Z', kind: DEPLOYMENT });
  assert.deepEqual(v4.metadata.managedFields, v3.metadata.managedFields);
});

test('removing a field removes it from every owner, dropping empty entries', () => {
  const v1 = stored(manifest({ labels: { app: 'web' } }));
  updateManagedFields(undefined, v1, { manager: 'a', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const v2 = structuredClone(v1);
  v2.metadata.annotations = { note: 'x' };
  updateManagedFields(v1, v2, { manager: 'b', operation: 'Update', now: T1, kind: DEPLOYMENT });
  const v3 = structuredClone(v2);
  delete v3.metadata.annotations;
  updateManagedFields(v2, v3, { manager: 'c', operation: 'Update', now: T2, kind: DEPLOYMENT });
  assert.deepEqual(
    v3.metadata.managedFields!.map((e) => e.manager),
    ['a'],
  );
});

test('main-resource writes do not own status; status writes are recorded under the subresource', () => {
  const v1 = stored(manifest());
  updateManagedFields(undefined, v1, { manager: 'kubectl-create', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const v2 = structuredClone(v1);
  v2.status = { observedGeneration: 1, conditions: [{ type: 'Available', status: 'True' }] };
  updateManagedFields(v1, v2, { manager: 'deployment-controller', operation: 'Update', subresource: 'status', now: T1, kind: DEPLOYMENT });
  assert.deepEqual(entry(v2, 'deployment-controller', 'Update'), {
    manager: 'deployment-controller',
    operation: 'Update',
    apiVersion: 'apps/v1',
    time: '2024-05-01T10:01:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: {
      'f:status': {
        'f:conditions': { '.': {}, 'k:{"type":"Available"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
        'f:observedGeneration': {},
      },
    },
    subresource: 'status',
  });
  const v3 = structuredClone(v2);
  (v3.status as Json).observedGeneration = 2;
  updateManagedFields(v2, v3, { manager: 'someone', operation: 'Update', now: T2, kind: DEPLOYMENT });
  assert.equal(entry(v3, 'someone', 'Update'), undefined);
});

test('a writer that sets its own fields again keeps its entry (only the time moves); a field it drops leaves its set', () => {
  const v1 = stored(manifest());
  updateManagedFields(undefined, v1, { manager: 'kubectl-create', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const status = (observedGeneration: number, extra: Json = {}) => ({ observedGeneration, conditions: [{ type: 'Available', status: 'True' }], ...extra });
  const write = (old: KubeObject, st: Json, now: string) => {
    const next = structuredClone(old);
    next.status = st;
    updateManagedFields(old, next, { manager: 'deployment-controller', operation: 'Update', subresource: 'status', now, kind: DEPLOYMENT });
    return next;
  };
  const v2 = write(v1, status(1, { replicas: 3 }), T1);
  const v3 = write(v2, status(2, { replicas: 4 }), T2);
  const { time: t2, ...e2 } = entry(v2, 'deployment-controller', 'Update')!;
  const { time: t3, ...e3 } = entry(v3, 'deployment-controller', 'Update')!;
  assert.deepEqual(e3, e2);
  assert.deepEqual([t2, t3], ['2024-05-01T10:01:00Z', '2024-05-01T10:02:00Z']);
  // Dropping replicas (and changing the rest) leaves replicas out of the set.
  const v4 = write(v3, status(3), '2024-05-01T10:03:00Z');
  assert.deepEqual((entry(v4, 'deployment-controller', 'Update')!.fieldsV1 as Json)['f:status'], {
    'f:conditions': { '.': {}, 'k:{"type":"Available"}': { '.': {}, 'f:status': {}, 'f:type': {} } },
    'f:observedGeneration': {},
  });
});

test('managedFields in the request are reset by [{}]; an empty list and garbage fall back to live', () => {
  const v1 = stored(manifest());
  updateManagedFields(undefined, v1, { manager: 'a', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const v2 = structuredClone(v1);
  v2.metadata.managedFields = [{}] as ManagedFieldsEntry[];
  updateManagedFields(v1, v2, { manager: 'b', operation: 'Update', now: T1, kind: DEPLOYMENT });
  assert.equal(v2.metadata.managedFields, undefined);
  // Upstream: an empty list is what a client unaware of managedFields sends; it must not strip them.
  const kept = structuredClone(v1);
  kept.metadata.managedFields = [];
  updateManagedFields(v1, kept, { manager: 'b', operation: 'Update', now: T1, kind: DEPLOYMENT });
  assert.deepEqual(kept.metadata.managedFields, v1.metadata.managedFields);
  const v3 = structuredClone(v1);
  v3.metadata.managedFields = [{ manager: 'x', operation: 'Bogus' as 'Update', fieldsType: 'FieldsV1', fieldsV1: {} }];
  updateManagedFields(v1, v3, { manager: 'b', operation: 'Update', now: T1, kind: DEPLOYMENT });
  assert.deepEqual(v3.metadata.managedFields, v1.metadata.managedFields);
});

test('appliers sort before updaters, updaters by time', () => {
  const created = stored(apply(undefined, manifest({ replicas: 1 }), 'kubectl', T1).object);
  const v2 = structuredClone(created);
  v2.metadata.labels = { x: 'y' };
  updateManagedFields(created, v2, { manager: 'zeta', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const v3 = structuredClone(v2);
  v3.metadata.annotations = { a: 'b' };
  updateManagedFields(v2, v3, { manager: 'alpha', operation: 'Update', now: T2, kind: DEPLOYMENT });
  assert.deepEqual(
    v3.metadata.managedFields!.map((e) => `${e.operation}:${e.manager}`),
    ['Apply:kubectl', 'Update:zeta', 'Update:alpha'],
  );
});

test('more than ten updaters fold the oldest into ancient-changes', () => {
  let cur = stored(manifest());
  for (let i = 0; i < 12; i++) {
    const next = structuredClone(cur);
    next.metadata.labels = { ...(next.metadata.labels ?? {}), [`l${i}`]: 'v' };
    updateManagedFields(cur, next, { manager: `m${i}`, operation: 'Update', now: new Date(Date.parse(T0) + i * 1000).toISOString(), kind: DEPLOYMENT });
    cur = next;
  }
  const managers = cur.metadata.managedFields!.map((e) => e.manager);
  assert.equal(managers.length, 10);
  assert.ok(managers.includes('ancient-changes'));
  const ancient = cur.metadata.managedFields!.find((e) => e.manager === 'ancient-changes')!;
  // m0 created the labels map, so the bucket owns the map itself too.
  assert.deepEqual(Object.keys((ancient.fieldsV1 as Json)['f:metadata']['f:labels']).sort(), ['.', 'f:l0', 'f:l1', 'f:l2']);
});

test('fieldSetOf encodes keys, sets and free-form maps as upstream does', () => {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', finalizers: ['x/y'], labels: { a: 'b' } },
    spec: {
      nodeSelector: { disk: 'ssd' },
      tolerations: [{ key: 'k', operator: 'Exists' }],
      containers: [{ name: 'c', image: 'i', env: [{ name: 'E', value: '1' }], ports: [{ containerPort: 53, protocol: 'UDP' }] }],
    },
  };
  assert.deepEqual(fieldSetOf(pod, { group: '', version: 'v1', kind: 'Pod' }), {
    'f:metadata': { 'f:finalizers': { 'v:"x/y"': {} }, 'f:labels': { 'f:a': {} } },
    'f:spec': {
      'f:containers': {
        'k:{"name":"c"}': {
          '.': {},
          'f:env': { 'k:{"name":"E"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
          'f:image': {},
          'f:name': {},
          'f:ports': { 'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
        },
      },
      'f:nodeSelector': {},
      'f:tolerations': {},
    },
  });
});

test('the synced last-applied annotation is encoded as Go writes it', () => {
  const config = manifest({ replicas: 1, labels: { app: 'a<b>&c' } });
  const obj = stored(structuredClone(config));
  obj.metadata.annotations = { [LAST_APPLIED_ANNOTATION]: '{}\n' };
  updateManagedFields(undefined, obj, { manager: 'kubectl-client-side-apply', operation: 'Update', now: T0, kind: DEPLOYMENT });
  const { object } = apply(obj, config, 'kubectl', T1);
  const text = object.metadata.annotations![LAST_APPLIED_ANNOTATION]!;
  assert.ok(text.endsWith('}\n'));
  assert.ok(text.startsWith('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"a\\u003cb\\u003e\\u0026c"},"name":"web"'));
  assert.deepEqual(JSON.parse(text), config);
});

test("a create's entry is exactly what the general update path records", async () => {
  const { useGeneralPathForCreates } = await import('../../src/apiserver/patch/managedfields.js');
  const objects: KubeObject[] = [
    stored(manifest({ replicas: 3, labels: { app: 'web', tier: 'front' } })),
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', labels: { a: 'b' }, annotations: { x: 'y' }, finalizers: ['f1', 'f2'], ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1', controller: true }] },
      spec: {
        containers: [
          { name: 'a', image: 'busybox', command: ['sleep', '1'], env: [{ name: 'X', value: '1' }, { name: 'Y', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }], ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }], resources: {} },
          { name: 'b', image: 'busybox', volumeMounts: [{ name: 'v', mountPath: '/v' }] },
        ],
        volumes: [{ name: 'v', emptyDir: {} }],
        tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
        nodeSelector: { disk: 'ssd' },
        securityContext: {},
        restartPolicy: 'Always',
      },
      status: { phase: 'Pending' },
    },
    { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/hostname': 'n1' } }, spec: { taints: [{ key: 't', effect: 'NoExecute' }], unschedulable: true }, status: { conditions: [{ type: 'Ready', status: 'True' }], capacity: { cpu: '2' } } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { a: '1', b: '' }, binaryData: { z: 'AAAA' } },
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'only-identity', namespace: 'default' } },
    { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }], clusterIPs: [], type: 'ClusterIP' } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns', labels: {} }, spec: { finalizers: ['kubernetes'] } },
    { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', namespace: 'kube-node-lease' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: null } },
    { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd', namespace: 'default' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }, { name: 'c', image: 'dup' }] } } } },
    // Odd but decodable shapes: a reset managedFields, nulls, empty maps and lists, a set holding a map, a keyed list missing its key.
    { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'odd', namespace: 'default', managedFields: [], labels: null, annotations: {}, finalizers: ['a', { x: 1 }, 'a'] } as unknown as KubeObject['metadata'], data: {} },
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'odd-pod', namespace: 'default' }, spec: { containers: [{ image: 'nameless' }, { name: 'n', env: null, ports: [] }], volumes: null, nodeSelector: {} }, status: { conditions: [] } },
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'scaled', namespace: 'default' }, spec: { replicas: 0, template: { spec: {} } }, status: { replicas: 1 } },
  ];
  for (const obj of objects) {
    const [group, version] = obj.apiVersion!.includes('/') ? obj.apiVersion!.split('/') : ['', obj.apiVersion!];
    const opts = { manager: 'm', operation: 'Update' as const, now: T1, kind: resourceTypeForKind(group!, version!, obj.kind!)! };
    const fast = structuredClone(obj);
    updateManagedFields(undefined, fast, opts);
    const general = structuredClone(obj);
    useGeneralPathForCreates(true);
    try {
      updateManagedFields(undefined, general, opts);
    } finally {
      useGeneralPathForCreates(false);
    }
    assert.deepEqual(fast.metadata.managedFields, general.metadata.managedFields, `${obj.kind} ${obj.metadata.name}`);
    assert.deepEqual(JSON.stringify(fast), JSON.stringify(general), `${obj.kind} ${obj.metadata.name}: key order`);
  }
});
