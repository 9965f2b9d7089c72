import { servedKinds } from '../../src/apiextensions/served-kinds.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { knownFieldsOf, unknownFields } from '../../src/api/field-validation.js';
import type { FieldTree } from '../../src/api/schema/known-fields.js';
import { resourceTypeForKind } from '../../src/api/registry.js';

const tree: FieldTree = {
  fields: {
    kind: 'leaf',
    metadata: { fields: { name: 'leaf', labels: { map: 'leaf' } } },
    spec: { fields: { items: { list: { fields: { name: 'leaf', opaque: 'leaf' } } }, byName: { map: { fields: { size: 'leaf' } } } } },
  },
};

test('unknownFields: paths spelled as upstream spells them, at any depth', () => {
  const obj = {
    kind: 'X',
    extra: 1,
    metadata: { name: 'a', labels: { any: 'thing' }, lables: {} },
    spec: { items: [{ name: 'a' }, { name: 'b', nmae: 'c', opaque: { whatever: { inside: true } } }], byName: { one: { size: 1, sise: 2 } } },
  };
  assert.deepEqual(unknownFields(obj, tree), ['extra', 'metadata.lables', 'spec.items[1].nmae', 'spec.byName.one.sise']);
  assert.equal(obj.extra, 1, 'not pruned unless asked');
});

test('unknownFields: prune removes exactly the unknown fields; wrong types are left to validation', () => {
  const obj: Record<string, unknown> = { kind: 'X', extra: 1, metadata: 'not-an-object', spec: { items: 'nope', byName: { one: { size: 1, sise: 2 } } } };
  assert.deepEqual(unknownFields(obj, tree, { prune: true }), ['extra', 'spec.byName.one.sise']);
  assert.deepEqual(obj, { kind: 'X', metadata: 'not-an-object', spec: { items: 'nope', byName: { one: { size: 1 } } } });
  assert.deepEqual(unknownFields({ toString: 1, constructor: 2 }, { fields: {} }), ['toString', 'constructor'], 'no inherited names count as known');
});

test('every served kind has a known-fields tree that accepts a typical object', () => {
  const pod = resourceTypeForKind('', 'v1', 'Pod')!;
  const obj = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'd', labels: { a: 'b' }, ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u', controller: true }], managedFields: [{ manager: 'm', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }] },
    spec: {
      nodeName: 'n',
      tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'a', operator: 'In', values: ['b'] }] }] } } },
      volumes: [{ name: 'v', configMap: { name: 'c', items: [{ key: 'k', path: 'p' }] } }, { name: 'e', emptyDir: { medium: 'Memory', sizeLimit: '1Gi' } }],
      containers: [
        {
          name: 'c',
          image: 'i',
          command: ['sleep'],
          args: ['1'],
          env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          resources: { requests: { cpu: '100m' }, limits: { memory: '64Mi' } },
          readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 5 },
          volumeMounts: [{ name: 'v', mountPath: '/v' }],
          securityContext: { runAsUser: 1000, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'i', imageID: '', state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }] },
  };
  assert.deepEqual(unknownFields(obj, knownFieldsOf(pod)), []);
  // A served kind without messages would make every write of it fail: each must have them.
  for (const rt of servedKinds) assert.doesNotThrow(() => knownFieldsOf(rt), `${rt.group}/${rt.kind} is described`);
  const deploy = resourceTypeForKind('apps', 'v1', 'Deployment')!;
  const d = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 1, selector: { matchLabels: { a: 'b' } }, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i', imagePullPolicyy: 'Always' }] } } },
  };
  assert.deepEqual(unknownFields(d, knownFieldsOf(deploy)), ['spec.template.spec.containers[0].imagePullPolicyy']);
});
