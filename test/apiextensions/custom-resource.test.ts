// The CRD kind's own rules and the resource types a CRD adds, without a server: what `kubectl apply`
// of a CRD would be refused with, and how its objects are printed, merged, scaled and validated.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { customResourceDefinitionResource, type CustomResourceDefinition } from '../../src/apiextensions/customresourcedefinition.js';
import { customResourceTypes, mergeSchemaOf } from '../../src/apiextensions/custom-resource.js';
import type { KubeObject } from '../../src/api/types.js';
import { jsonTypeError, metadataTypeError } from '../../src/apiserver/protobuf/json-types.js';

function crd(overrides: Record<string, unknown> = {}): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', kind: 'Widget' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } },
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
            { name: 'Detail', type: 'string', jsonPath: '.spec.detail', priority: 1 },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    replicas: { type: 'integer' },
                    detail: { type: 'string' },
                    ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port'], items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } } } },
                    labels: { type: 'object', additionalProperties: { type: 'string' } },
                    selector: { type: 'object', 'x-kubernetes-map-type': 'atomic', properties: { app: { type: 'string' } } },
                  },
                },
                status: { type: 'object', properties: { conditions: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, status: { type: 'string' } } } } } },
              },
            },
          },
        },
      ],
      ...overrides,
    },
  } as CustomResourceDefinition;
}

function causesOf(o: CustomResourceDefinition): string[] {
  const c = structuredClone(o) as KubeObject;
  customResourceDefinitionResource.defaults(c);
  return customResourceDefinitionResource.validate(c, undefined).map((x) => `${x.field}: ${x.message}`);
}

test('a CRD gets upstream defaults and its storage version recorded', () => {
  const c = structuredClone(crd()) as KubeObject;
  customResourceDefinitionResource.defaults(c);
  customResourceDefinitionResource.prepareForCreate!(c);
  const spec = c.spec as CustomResourceDefinition['spec'];
  assert.deepEqual(spec.names, { plural: 'widgets', kind: 'Widget', singular: 'widget', listKind: 'WidgetList' });
  assert.deepEqual(spec.conversion, { strategy: 'None' });
  assert.deepEqual(c.status, { storedVersions: ['v1'] });
  assert.deepEqual(causesOf(crd()), []);
});

test('a CRD is refused with upstream messages naming the field', () => {
  assert.deepEqual(causesOf({ ...crd(), metadata: { name: 'gadgets.example.com' } }), ['metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group']);
  assert.ok(causesOf(crd({ group: 'example' })).includes('spec.group: Invalid value: "example": should be a domain with at least one dot'));
  assert.ok(causesOf(crd({ scope: 'Global' })).includes('spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'));
  const twoStorage = crd();
  twoStorage.spec.versions.push({ ...twoStorage.spec.versions[0]!, name: 'v2' });
  assert.ok(causesOf(twoStorage).some((c) => c.startsWith('spec.versions: Invalid value') && c.endsWith('must have exactly one version marked as storage version')));
  const noSchema = crd();
  delete noSchema.spec.versions[0]!.schema;
  assert.ok(causesOf(noSchema).includes('spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required'));
  const badColumn = crd();
  badColumn.spec.versions[0]!.additionalPrinterColumns = [{ name: 'X', type: 'text', jsonPath: '.spec.x' }];
  assert.ok(causesOf(badColumn).includes('spec.versions[0].additionalPrinterColumns[0].type: Unsupported value: "text": supported values: "boolean", "date", "integer", "number", "string"'));
  const badScale = crd();
  badScale.spec.versions[0]!.subresources = { scale: { specReplicasPath: '.replicas', statusReplicasPath: '.status.replicas' } };
  assert.ok(causesOf(badScale).includes('spec.versions[0].subresources.scale.specReplicasPath: Invalid value: ".replicas": should be a json path under .spec'));
  assert.ok(causesOf(crd({ names: { plural: 'Widgets', kind: 'Widget' } })).some((c) => c.startsWith('spec.names.plural: Invalid value: "Widgets": a DNS-1035 label must consist of lower case')));
});

test('each served version is a resource type: printer columns, scale paths, merge rules', () => {
  const [rt] = customResourceTypes(crd());
  assert.ok(rt);
  assert.deepEqual([rt.group, rt.version, rt.resource, rt.kind, rt.listKind, rt.singular, rt.namespaced, rt.storageKey], ['example.com', 'v1', 'widgets', 'Widget', 'WidgetList', 'widget', true, 'example.com/widgets']);
  assert.deepEqual(rt.subresources, ['status', 'scale']);
  assert.deepEqual(rt.table.columns.map((c) => [c.name, c.priority]), [['Name', 0], ['Ready', 0], ['Replicas', 0], ['Detail', 1]]);
  const obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { replicas: 3 }, status: { conditions: [{ type: 'Other', status: 'False' }, { type: 'Ready', status: 'True' }] } } as KubeObject;
  assert.deepEqual(rt.table.cells(obj, Date.now()), ['w', 'True', 3, null]);
  const spec = rt.mergeSchema!.fields['spec'];
  assert.equal(spec?.type, 'struct');
  if (spec?.type !== 'struct') return;
  assert.deepEqual(spec.fields['ports'], { type: 'list', strategy: 'replace', listType: 'map', keys: ['port'], items: { type: 'struct', fields: {} } });
  assert.deepEqual(spec.fields['labels'], { type: 'map' });
  assert.deepEqual(spec.fields['selector'], { type: 'atomic' });
  assert.deepEqual(mergeSchemaOf({ type: 'array', items: { type: 'string' } }), { type: 'list', strategy: 'replace', listType: 'atomic' });
});

test('a version that is not served adds no type; a deprecated one warns', () => {
  const c = crd();
  c.spec.versions.push({ name: 'v1beta1', served: true, storage: false, deprecated: true, schema: { openAPIV3Schema: { type: 'object' } } });
  c.spec.versions.push({ name: 'v1alpha1', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object' } } });
  const types = customResourceTypes(c);
  assert.deepEqual(types.map((t) => t.version), ['v1', 'v1beta1']);
  assert.deepEqual(types[1]!.warnings, ['example.com/v1beta1 Widget is deprecated']);
});

test('CEL rules are accepted with a warning naming where they are, never silently', () => {
  const c = crd();
  const spec = c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!['spec']!;
  spec['x-kubernetes-validations'] = [{ rule: 'self.replicas <= 5' }];
  assert.deepEqual(causesOf(c), []);
  assert.deepEqual(customResourceDefinitionResource.warningsFor!(c), [
    'spec.versions[0].schema.openAPIV3Schema.properties[spec]: x-kubernetes-validations rules are not evaluated by this server; objects are checked against the rest of the schema only',
  ]);
  assert.deepEqual(customResourceDefinitionResource.warningsFor!(crd()), []);
});

test('schema values of the wrong type are refused as Go decodes them, and bad metadata of a custom object too', () => {
  const c = crd();
  const spec = c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!['spec']! as Record<string, unknown>;
  spec['required'] = 'replicas';
  assert.equal(
    jsonTypeError(c as unknown as Record<string, unknown>, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
    'json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.required of type []string',
  );
  spec['required'] = ['replicas'];
  (spec['properties'] as Record<string, Record<string, unknown>>)['detail']!['maxLength'] = '3';
  assert.match(jsonTypeError(c as unknown as Record<string, unknown>, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition') ?? '', /cannot unmarshal string into Go struct field JSONSchemaProps\..*\.maxLength of type int64/);
  assert.equal(metadataTypeError({ metadata: { name: 'w', finalizers: 'abc' } }, 'Widget'), 'json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string');
  assert.equal(metadataTypeError({ metadata: { name: 'w', finalizers: ['a/b'] } }, 'Widget'), undefined);
});

test('groups Kubernetes owns need approval, groups the server serves are refused, stored versions stay versions', () => {
  const k8s = crd({ group: 'widgets.k8s.io' });
  k8s.metadata.name = 'widgets.widgets.k8s.io';
  assert.ok(causesOf(k8s).includes('metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation "api-approved.kubernetes.io", see https://github.com/kubernetes/enhancements/pull/1111'));
  k8s.metadata.annotations = { 'api-approved.kubernetes.io': 'unapproved, experimental' };
  assert.deepEqual(causesOf(k8s), []);
  const served = crd({ group: 'coordination.k8s.io' });
  served.metadata.name = 'widgets.coordination.k8s.io';
  assert.ok(causesOf(served).includes('spec.group: Forbidden: coordination.k8s.io is served by the API server itself'));
  const old = structuredClone(crd()) as KubeObject;
  customResourceDefinitionResource.defaults(old);
  old.status = { storedVersions: ['v1'] };
  const next = structuredClone(old);
  (next.spec as CustomResourceDefinition['spec']).versions[0]!.name = 'v2';
  customResourceDefinitionResource.prepareForUpdate!(next, old);
  assert.ok(customResourceDefinitionResource.validate(next, old).some((c) => c.field === 'status.storedVersions[0]' && c.message === 'Invalid value: "v1": must appear in spec.versions'));
});

test('a value the schema was tightened against may stay while it is not changed (validation ratcheting)', () => {
  const c = crd();
  const props = c.spec.versions[0]!.schema!.openAPIV3Schema!.properties!['spec']!.properties!;
  props['detail'] = { type: 'string', maxLength: 3 };
  props['replicas'] = { type: 'integer', maximum: 5 };
  const [rt] = customResourceTypes(c);
  const old = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { detail: 'too long', replicas: 3 } } as KubeObject;
  const labelled = structuredClone(old);
  labelled.metadata.labels = { ratchet: 'yes' };
  assert.deepEqual(rt!.validate(labelled, old), []);
  const changed = structuredClone(old);
  (changed.spec as { detail: string }).detail = 'longer still';
  assert.deepEqual(rt!.validate(changed, old).map((x) => x.field), ['spec.detail']);
  assert.deepEqual(rt!.validate(old, undefined).map((x) => x.field), ['spec.detail']);
});

test('a printer column path must start with a dot', () => {
  const c = crd();
  c.spec.versions[0]!.additionalPrinterColumns = [{ name: 'Color', type: 'string', jsonPath: 'spec.color' }];
  assert.ok(causesOf(c).includes('spec.versions[0].additionalPrinterColumns[0].jsonPath: Invalid value: "spec.color": must be a simple json path starting with .'));
});
