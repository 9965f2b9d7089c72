import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/api/errors.js';
import type { GroupVersionKind, KubeObject } from '../../src/api/types.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch, patchKindOf, patchObject, fieldManagerFor } from '../../src/apiserver/patch/index.js';

const NODE: GroupVersionKind = { group: '', version: 'v1', kind: 'Node' };
const POD: GroupVersionKind = { group: '', version: 'v1', kind: 'Pod' };
const DEPLOYMENT: GroupVersionKind = { group: 'apps', version: 'v1', kind: 'Deployment' };
const SERVICE: GroupVersionKind = { group: '', version: 'v1', kind: 'Service' };

function statusOf(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected a StatusError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected an error');
}

function node(extra: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', labels: { zone: 'a' } }, spec: { podCIDR: '10.0.0.0/24' }, ...extra };
}

function deployment(): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'api', namespace: 'default', finalizers: ['a/one', 'b/two', 'c/three'] },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'api' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'api' } },
        spec: {
          containers: [
            {
              name: 'api',
              image: 'nginx:1.27',
              ports: [{ containerPort: 80, protocol: 'TCP' }],
              env: [
                { name: 'A', value: '1' },
                { name: 'B', value: '2' },
              ],
              volumeMounts: [{ name: 'data', mountPath: '/data' }],
            },
            { name: 'sidecar', image: 'busybox:1', args: ['sleep', '3600'] },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      },
    },
  };
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// ---- JSON patch -----------------------------------------------------------------------------

test('json patch: add, replace and remove without touching the input', () => {
  const live = node();
  const out = applyJsonPatch(live, [
    { op: 'add', path: '/metadata/labels/tier', value: 'fe' },
    { op: 'replace', path: '/spec/podCIDR', value: '10.0.1.0/24' },
    { op: 'remove', path: '/metadata/labels/zone' },
  ]) as Json;
  assert.deepEqual(out.metadata.labels, { tier: 'fe' });
  assert.equal(out.spec.podCIDR, '10.0.1.0/24');
  assert.deepEqual(live, node());
});

test('json patch: a failed test op is the generic 422 upstream sends', () => {
  const e = statusOf(() => applyJsonPatch(node(), [{ op: 'test', path: '/spec/podCIDR', value: 'nope' }, { op: 'remove', path: '/spec' }]));
  assert.equal(e.code, 422);
  assert.equal(e.status.reason, 'Invalid');
  assert.equal(e.status.message, 'the server rejected our request due to an error in our request');
  assert.deepEqual(e.status.details, {});
});

test('json patch: a passing test op lets the rest apply', () => {
  const out = applyJsonPatch(node(), [
    { op: 'test', path: '/spec/podCIDR', value: '10.0.0.0/24' },
    { op: 'add', path: '/spec/unschedulable', value: true },
  ]) as Json;
  assert.equal(out.spec.unschedulable, true);
});

test('json patch: paths that do not resolve are 422, never 500', () => {
  for (const op of [
    { op: 'remove', path: '/metadata/labels/missing' },
    { op: 'replace', path: '/spec/nothing', value: 1 },
    { op: 'add', path: '/no/such/parent', value: 1 },
    { op: 'add', path: 'metadata', value: 1 },
    { op: 'move', from: '/nope', path: '/spec/x' },
    { op: 'bogus', path: '/spec' },
    { op: 'add', path: '/spec/x' },
  ]) {
    const e = statusOf(() => applyJsonPatch(node(), [op]));
    assert.equal(e.code, 422, JSON.stringify(op));
  }
});

test('json patch: an undecodable patch is 400 BadRequest with Go wording', () => {
  let e = statusOf(() => applyJsonPatch(node(), { op: 'add' }));
  assert.equal(e.code, 400);
  assert.equal(e.status.reason, 'BadRequest');
  assert.equal(e.status.message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  e = statusOf(() => applyJsonPatch(node(), [1]));
  assert.equal(e.status.message, 'json: cannot unmarshal number into Go value of type jsonpatch.Operation');
});

test('json patch: null is an empty patch, and the operation cap is 413', () => {
  assert.deepEqual(applyJsonPatch(node(), null), node());
  const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/kind', value: 'Node' }));
  const e = statusOf(() => applyJsonPatch(node(), ops));
  assert.equal(e.code, 413);
  assert.match(e.status.message ?? '', /maximum operations in a JSON patch is 10000, got 10001/);
});

test('json patch: values inserted are not shared with the patch body', () => {
  const patch = [{ op: 'add', path: '/metadata/annotations', value: { a: 'b' } }];
  const out = applyJsonPatch(node(), patch) as Json;
  out.metadata.annotations.a = 'changed';
  assert.equal(patch[0]!.value.a, 'b');
});

// ---- merge patch ----------------------------------------------------------------------------

test('merge patch: kubectl label adds and removes labels', () => {
  const live = node();
  let out = applyMergePatch(live, { metadata: { labels: { tier: 'fe' } } }) as Json;
  assert.deepEqual(out.metadata.labels, { zone: 'a', tier: 'fe' });
  out = applyMergePatch(out, { metadata: { labels: { zone: null } } }) as Json;
  assert.deepEqual(out.metadata.labels, { tier: 'fe' });
  assert.deepEqual(live, node());
});

test('merge patch: null deletes, new objects lose their nulls, lists are replaced', () => {
  const live = node({ status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }], capacity: { cpu: '2' } } });
  const out = applyMergePatch(live, {
    spec: { podCIDR: null, taints: [{ key: 'k', effect: 'NoSchedule' }] },
    status: { addresses: [{ type: 'Hostname', address: 'a' }], nodeInfo: { kubeletVersion: 'v1', bootID: null } },
  }) as Json;
  assert.equal('podCIDR' in out.spec, false);
  assert.deepEqual(out.spec.taints, [{ key: 'k', effect: 'NoSchedule' }]);
  assert.deepEqual(out.status.addresses, [{ type: 'Hostname', address: 'a' }]);
  assert.deepEqual(out.status.nodeInfo, { kubeletVersion: 'v1' });
  assert.deepEqual(out.status.capacity, { cpu: '2' });
});

test('merge patch: scale body sets replicas', () => {
  const scale = { apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas: 1 }, status: { replicas: 1 } };
  assert.deepEqual((applyMergePatch(scale, { spec: { replicas: 3 } }) as Json).spec, { replicas: 3 });
});

test('merge patch: a scalar or null patch is 400 Invalid JSON Patch', () => {
  for (const p of [null, 'x', 3]) {
    const e = statusOf(() => applyMergePatch(node(), p));
    assert.equal(e.code, 400);
    assert.equal(e.status.message, 'Invalid JSON Patch');
  }
});

test('patchObject: a patch that turns the object into a list is 422', () => {
  const e = statusOf(() => patchObject(node(), 'merge', [1, 2], NODE));
  assert.equal(e.code, 422);
  assert.equal(e.status.details?.causes?.[0]?.field, 'patch');
});

// ---- strategic merge patch ------------------------------------------------------------------

test('smp: cordon and uncordon', () => {
  const cordoned = applyStrategicMergePatch(node(), { spec: { unschedulable: true } }, NODE) as Json;
  assert.equal(cordoned.spec.unschedulable, true);
  assert.equal(cordoned.spec.podCIDR, '10.0.0.0/24');
  const uncordoned = applyStrategicMergePatch(cordoned as KubeObject, { spec: { unschedulable: null } }, NODE) as Json;
  assert.equal('unschedulable' in uncordoned.spec, false);
  assert.deepEqual(uncordoned, node());
});

test('smp: taints are replaced whole, and null removes the last one', () => {
  const live = node({ spec: { taints: [{ key: 'a', value: '1', effect: 'NoSchedule' }] } });
  const added = applyStrategicMergePatch(
    live,
    {
      spec: {
        taints: [
          { effect: 'NoSchedule', key: 'a', value: '1' },
          { effect: 'NoSchedule', key: 'dedicated', value: 'gpu' },
        ],
      },
    },
    NODE,
  ) as Json;
  assert.deepEqual(added.spec.taints, [
    { effect: 'NoSchedule', key: 'a', value: '1' },
    { effect: 'NoSchedule', key: 'dedicated', value: 'gpu' },
  ]);
  const one = applyStrategicMergePatch(added as KubeObject, { spec: { taints: [{ effect: 'NoSchedule', key: 'dedicated', value: 'gpu' }] } }, NODE) as Json;
  assert.deepEqual(one.spec.taints, [{ effect: 'NoSchedule', key: 'dedicated', value: 'gpu' }]);
  const none = applyStrategicMergePatch(one as KubeObject, { spec: { taints: null } }, NODE) as Json;
  assert.equal('taints' in none.spec, false);
});

test('smp: client-side apply update keeps container fields it does not mention', () => {
  const patch = {
    metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"kind":"Deployment"}\n' } },
    spec: {
      replicas: 4,
      template: {
        spec: {
          '$setElementOrder/containers': [{ name: 'api' }, { name: 'sidecar' }],
          containers: [{ image: 'nginx:1.28', name: 'api' }],
        },
      },
    },
  };
  const live = deployment();
  const out = applyStrategicMergePatch(live, patch, DEPLOYMENT) as Json;
  assert.equal(out.spec.replicas, 4);
  const [api, sidecar] = out.spec.template.spec.containers;
  assert.equal(api.name, 'api');
  assert.equal(api.image, 'nginx:1.28');
  assert.deepEqual(api.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.equal(api.env.length, 2);
  assert.deepEqual(sidecar, { name: 'sidecar', image: 'busybox:1', args: ['sleep', '3600'] });
  assert.equal(out.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration'], '{"kind":"Deployment"}\n');
  assert.deepEqual(live, deployment(), 'input untouched');
  assert.equal('$setElementOrder/containers' in out.spec.template.spec, false);
});

test('smp: without $setElementOrder, live-only elements keep their place relative to patched ones', () => {
  const live = deployment();
  (live.spec as Json).template.spec.containers = ['b', 'c', 'a'].map((name) => ({ name, image: `${name}:1` }));
  const out = applyStrategicMergePatch(
    live,
    { spec: { template: { spec: { containers: [{ name: 'a', image: 'a:2' }, { name: 'b', image: 'b:2' }, { name: 'd', image: 'd:1' }] } } } },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(
    out.spec.template.spec.containers.map((c: Json) => `${c.name}:${c.image}`),
    ['c:c:1', 'a:a:2', 'b:b:2', 'd:d:1'],
  );
});

test('smp: $setElementOrder alone reorders a merged list', () => {
  const out = applyStrategicMergePatch(deployment(), { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'api' }] } } } }, DEPLOYMENT) as Json;
  assert.deepEqual(
    out.spec.template.spec.containers.map((c: Json) => c.name),
    ['sidecar', 'api'],
  );
});

test('smp: $setElementOrder places a new element where the client wants it', () => {
  const out = applyStrategicMergePatch(
    deployment(),
    {
      spec: {
        template: {
          spec: {
            '$setElementOrder/containers': [{ name: 'api' }, { name: 'logger' }, { name: 'sidecar' }],
            containers: [{ name: 'logger', image: 'fluent:1' }],
          },
        },
      },
    },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(
    out.spec.template.spec.containers.map((c: Json) => c.name),
    ['api', 'logger', 'sidecar'],
  );
});

test('smp: a patch list out of $setElementOrder order is 400', () => {
  const e = statusOf(() =>
    applyStrategicMergePatch(
      deployment(),
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'api' }, { name: 'sidecar' }],
              containers: [{ name: 'sidecar', image: 'x' }, { name: 'api', image: 'y' }],
            },
          },
        },
      },
      DEPLOYMENT,
    ),
  );
  assert.equal(e.code, 400);
  assert.match(e.status.message ?? '', /doesn't match \$setElementOrder list/);
});

test('smp: env merges by name', () => {
  const out = applyStrategicMergePatch(
    deployment(),
    { spec: { template: { spec: { containers: [{ name: 'api', env: [{ name: 'B', value: 'two' }, { name: 'C', value: '3' }] }] } } } },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(out.spec.template.spec.containers[0].env, [
    { name: 'A', value: '1' },
    { name: 'B', value: 'two' },
    { name: 'C', value: '3' },
  ]);
});

test('smp: null inside a merged element removes that field only', () => {
  const out = applyStrategicMergePatch(deployment(), { spec: { template: { spec: { containers: [{ name: 'sidecar', args: null }] } } } }, DEPLOYMENT) as Json;
  assert.deepEqual(out.spec.template.spec.containers[1], { name: 'sidecar', image: 'busybox:1' });
});

test('smp: $patch delete removes a container; $patch replace replaces the list', () => {
  const del = applyStrategicMergePatch(deployment(), { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } }, DEPLOYMENT) as Json;
  assert.deepEqual(
    del.spec.template.spec.containers.map((c: Json) => c.name),
    ['api'],
  );
  const rep = applyStrategicMergePatch(
    deployment(),
    { spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }, { $patch: 'replace' }] } } } },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(rep.spec.template.spec.containers, [{ name: 'only', image: 'x' }]);
});

test('smp: $patch replace on a map replaces it, $patch delete empties it', () => {
  const rep = applyStrategicMergePatch(deployment(), { spec: { template: { metadata: { labels: { $patch: 'replace', app: 'new' } } } } }, DEPLOYMENT) as Json;
  assert.deepEqual(rep.spec.template.metadata.labels, { app: 'new' });
  const del = applyStrategicMergePatch(deployment(), { spec: { strategy: { $patch: 'delete' } } }, DEPLOYMENT) as Json;
  assert.deepEqual(del.spec.strategy, {});
  const merge = applyStrategicMergePatch(deployment(), { spec: { template: { metadata: { labels: { $patch: 'merge', tier: 'fe' } } } } }, DEPLOYMENT) as Json;
  assert.deepEqual(merge.spec.template.metadata.labels, { app: 'api', tier: 'fe' });
});

test('smp: an unknown $patch value is 400, not 500', () => {
  const e = statusOf(() => applyStrategicMergePatch(deployment(), { spec: { $patch: 'explode' } }, DEPLOYMENT));
  assert.equal(e.code, 400);
  assert.match(e.status.message ?? '', /unknown patch type: explode in map/);
});

test('smp: finalizers are a set; $deleteFromPrimitiveList removes from it', () => {
  const added = applyStrategicMergePatch(deployment(), { metadata: { finalizers: ['b/two', 'd/four'] } }, DEPLOYMENT) as Json;
  assert.deepEqual([...added.metadata.finalizers].sort(), ['a/one', 'b/two', 'c/three', 'd/four']);
  const removed = applyStrategicMergePatch(deployment(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['b/two', 'zzz'] } }, DEPLOYMENT) as Json;
  assert.deepEqual(removed.metadata.finalizers, ['a/one', 'c/three']);
  const e = statusOf(() => applyStrategicMergePatch(deployment(), { metadata: { '$deleteFromPrimitiveList/finalizers': 'b/two' } }, DEPLOYMENT));
  assert.equal(e.status.message, 'invalid patch format of primitive list');
});

test('smp: $setElementOrder and $deleteFromPrimitiveList together, as kubectl diffs finalizers', () => {
  const out = applyStrategicMergePatch(
    deployment(),
    { metadata: { '$setElementOrder/finalizers': ['c/three', 'a/one', 'e/five'], '$deleteFromPrimitiveList/finalizers': ['b/two'], finalizers: ['e/five'] } },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(out.metadata.finalizers, ['c/three', 'a/one', 'e/five']);
});

test('smp: $retainKeys on the deployment strategy drops rollingUpdate', () => {
  const out = applyStrategicMergePatch(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, DEPLOYMENT) as Json;
  assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
  const e = statusOf(() => applyStrategicMergePatch(deployment(), { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } }, DEPLOYMENT));
  assert.equal(e.code, 400);
  assert.equal(e.status.message, 'invalid patch format of retainKeys');
});

test('smp: container ports merge by containerPort, service ports by port', () => {
  const out = applyStrategicMergePatch(
    deployment(),
    { spec: { template: { spec: { containers: [{ name: 'api', ports: [{ containerPort: 80, name: 'http' }, { containerPort: 443 }] }] } } } },
    DEPLOYMENT,
  ) as Json;
  assert.deepEqual(out.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP', name: 'http' }, { containerPort: 443 }]);
  const svc: KubeObject = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, targetPort: 8080 }], selector: { app: 'a', tier: 'fe' } } };
  const s = applyStrategicMergePatch(svc, { spec: { ports: [{ port: 80, targetPort: 9090 }, { port: 81 }], selector: { tier: null } } }, SERVICE) as Json;
  assert.deepEqual(s.spec.ports, [{ port: 80, targetPort: 9090 }, { port: 81 }]);
  assert.deepEqual(s.spec.selector, { app: 'a' });
});

test('smp: volumeMounts merge by mountPath, volumes by name', () => {
  const out = applyStrategicMergePatch(
    deployment(),
    {
      spec: {
        template: {
          spec: {
            containers: [{ name: 'api', volumeMounts: [{ mountPath: '/cache', name: 'cache' }] }],
            volumes: [{ name: 'cache', emptyDir: {} }],
          },
        },
      },
    },
    DEPLOYMENT,
  ) as Json;
  // Without $setElementOrder upstream puts new elements ahead of live ones it can't place.
  assert.deepEqual(
    out.spec.template.spec.containers[0].volumeMounts.map((m: Json) => m.mountPath),
    ['/cache', '/data'],
  );
  assert.deepEqual(
    out.spec.template.spec.volumes.map((v: Json) => v.name),
    ['cache', 'data'],
  );
  assert.deepEqual(out.spec.template.spec.containers[0].volumeMounts[1], { name: 'data', mountPath: '/data' });
});

test('smp: node status conditions and addresses merge by type (kubelet status patch)', () => {
  const live = node({
    status: {
      conditions: [
        { type: 'Ready', status: 'True', lastHeartbeatTime: 't0' },
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't0' },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.0.1' },
        { type: 'Hostname', address: 'node-a' },
      ],
    },
  });
  const out = applyStrategicMergePatch(
    live,
    {
      status: {
        '$setElementOrder/conditions': [{ type: 'MemoryPressure' }, { type: 'Ready' }],
        conditions: [{ type: 'Ready', status: 'False', lastHeartbeatTime: 't1' }],
        addresses: [{ type: 'InternalIP', address: '10.0.0.2' }],
      },
    },
    NODE,
  ) as Json;
  assert.deepEqual(out.status.conditions, [
    { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 't0' },
    { type: 'Ready', status: 'False', lastHeartbeatTime: 't1' },
  ]);
  assert.deepEqual(out.status.addresses, [
    { type: 'InternalIP', address: '10.0.0.2' },
    { type: 'Hostname', address: 'node-a' },
  ]);
});

test('smp: ownerReferences merge by uid; tolerations are replaced', () => {
  const pod: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u1' }] },
    spec: { containers: [{ name: 'c', image: 'i' }], tolerations: [{ key: 'a', operator: 'Exists' }] },
  };
  const out = applyStrategicMergePatch(
    pod,
    {
      metadata: { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n', uid: 'u2' }] },
      spec: { tolerations: [{ key: 'b', operator: 'Exists' }] },
    },
    POD,
  ) as Json;
  assert.deepEqual(
    out.metadata.ownerReferences.map((o: Json) => o.uid),
    ['u2', 'u1'],
  );
  assert.deepEqual(out.spec.tolerations, [{ key: 'b', operator: 'Exists' }]);
});

test('smp: fields outside the schema merge maps and replace lists', () => {
  const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' }, extra: { list: [1, 2], map: { x: 1 } } };
  const out = applyStrategicMergePatch(cm, { data: { b: null, c: '3' }, extra: { list: [3], map: { y: 2 } } }, { group: '', version: 'v1', kind: 'ConfigMap' }) as Json;
  assert.deepEqual(out.data, { a: '1', c: '3' });
  assert.deepEqual(out.extra, { list: [3], map: { x: 1, y: 2 } });
});

test('smp: new keyed elements have their directives applied, not stored', () => {
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} };
  const out = applyStrategicMergePatch(
    pod,
    { spec: { containers: [{ name: 'a', image: 'x', env: [{ name: 'E', value: 'v' }, { name: 'gone', $patch: 'delete' }] }, { name: 'b', $patch: 'delete' }] } },
    POD,
  ) as Json;
  assert.deepEqual(out.spec.containers, [{ name: 'a', image: 'x', env: [{ name: 'E', value: 'v' }] }]);
});

test('smp: malformed patches are 400 (422 for lists of lists), never 500', () => {
  let e = statusOf(() => applyStrategicMergePatch(deployment(), [1], DEPLOYMENT));
  assert.equal(e.code, 400);
  e = statusOf(() => applyStrategicMergePatch(deployment(), { spec: { template: { spec: { containers: [{ image: 'no-name' }] } } } }, DEPLOYMENT));
  assert.equal(e.code, 400);
  assert.match(e.status.message ?? '', /does not contain declared merge key: name/);
  e = statusOf(() => applyStrategicMergePatch(deployment(), { metadata: { finalizers: [['x']] } }, DEPLOYMENT));
  assert.equal(e.code, 422);
  e = statusOf(() => applyStrategicMergePatch(deployment(), { metadata: { finalizers: ['x', 1] } }, DEPLOYMENT));
  assert.equal(e.code, 400);
  assert.deepEqual(applyStrategicMergePatch(deployment(), null, DEPLOYMENT), deployment());
});

// ---- helpers --------------------------------------------------------------------------------

test('patchKindOf maps content types and rejects others with 415', () => {
  assert.equal(patchKindOf('application/strategic-merge-patch+json; charset=utf-8'), 'strategic');
  assert.equal(patchKindOf('application/apply-patch+yaml'), 'apply');
  const e = statusOf(() => patchKindOf('application/json'));
  assert.equal(e.code, 415);
});

test('fieldManagerFor falls back to the user-agent prefix', () => {
  assert.equal(fieldManagerFor('kubectl-label', 'kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07'), 'kubectl-label');
  assert.equal(fieldManagerFor(undefined, 'kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07'), 'kubectl');
  assert.equal(fieldManagerFor(null, 'node-fetch/1.0 (+https://github.com/bitinn/node-fetch)'), 'node-fetch');
  assert.equal(fieldManagerFor('', 'a\u0001b/1'), 'ab');
});

test('patches cannot reach prototypes', () => {
  const evil = JSON.parse('{"metadata":{"__proto__":{"polluted":1},"labels":{"__proto__":{"polluted":1}}},"spec":{"$setElementOrder/__proto__":[],"__proto__":[1]}}');
  const outs = [applyMergePatch(node(), evil), applyStrategicMergePatch(node(), evil, NODE)] as Json[];
  for (const out of outs) {
    assert.equal(Object.getPrototypeOf(out.metadata), Object.prototype);
    assert.equal(Object.getPrototypeOf(out.spec), Object.prototype);
  }
  assert.equal(({} as Json).polluted, undefined);
});
