// The OpenAPI definitions are a view of the kinds' messages, as the known fields of field validation
// and the merge schema of patches are: kubectl explains from them and computes client-side apply
// patches with them, so they must name the same fields and merge the same way the server does.
import { servedKinds } from '../../src/apiextensions/served-kinds.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { knownFieldsOf } from '../../src/api/field-validation.js';
import type { FieldTree } from '../../src/api/schema/known-fields.js';
import { apiVersionOf } from '../../src/api/types.js';
import { schemaFor, type Schema } from '../../src/api/schema/merge-schema.js';
import { builtinKindDefinitions, type OpenApiSchema } from '../../src/apiserver/openapi/definitions.js';

type Resolve = (s: OpenApiSchema) => OpenApiSchema;

function resolver(schemas: Map<string, OpenApiSchema>): Resolve {
  const resolve: Resolve = (s) => {
    const ref = (s['$ref'] as string | undefined) ?? ((s['allOf'] as OpenApiSchema[] | undefined)?.[0]?.['$ref'] as string | undefined);
    if (!ref) return s;
    const target = schemas.get(ref.replace('#/components/schemas/', ''));
    assert.ok(target, `${ref} is defined`);
    return resolve(target);
  };
  return resolve;
}

/** Known-field paths the definitions lack, and merge rules they publish differently. */
function disagreements(tree: FieldTree, merge: Schema | undefined, def: OpenApiSchema, resolve: Resolve, path: string, out: string[], seen: Set<OpenApiSchema>): void {
  if (tree === 'leaf' || seen.has(def)) return;
  seen.add(def);
  if ('fields' in tree) {
    const props = (def['properties'] ?? {}) as Record<string, OpenApiSchema>;
    for (const [name, sub] of Object.entries(tree.fields)) {
      const p = props[name];
      if (!p) {
        out.push(`${path}.${name}: not in the definitions`);
        continue;
      }
      const m = merge?.type === 'struct' ? merge.fields[name] : undefined;
      if (m?.type === 'list') {
        const want = { strategy: m.strategy === 'merge' ? 'merge' : undefined, key: m.mergeKey, listType: m.listType === 'atomic' ? undefined : m.listType, keys: m.keys };
        const got = { strategy: p['x-kubernetes-patch-strategy'], key: p['x-kubernetes-patch-merge-key'], listType: p['x-kubernetes-list-type'] === 'atomic' ? undefined : p['x-kubernetes-list-type'], keys: p['x-kubernetes-list-map-keys'] };
        if (JSON.stringify(want) !== JSON.stringify(got)) out.push(`${path}.${name}: merges as ${JSON.stringify(want)}, published as ${JSON.stringify(got)}`);
      }
      const isAtomicMap = m?.type === 'map' && m.atomic === true;
      if (isAtomicMap !== (p['x-kubernetes-map-type'] === 'atomic')) out.push(`${path}.${name}: map type differs`);
      disagreements(sub, m, resolve(p), resolve, `${path}.${name}`, out, seen);
    }
    return;
  }
  if ('list' in tree) return disagreements(tree.list, merge?.type === 'list' ? merge.items : undefined, resolve(def['items'] as OpenApiSchema), resolve, `${path}[]`, out, seen);
  disagreements(tree.map, merge?.type === 'map' ? merge.values : undefined, resolve(def['additionalProperties'] as OpenApiSchema), resolve, `${path}{}`, out, seen);
}

test('every served kind has an OpenAPI definition naming its kind, its fields and how they merge', () => {
  for (const rt of servedKinds) {
    const defs = builtinKindDefinitions(apiVersionOf(rt.group, rt.version), rt.kind, '#/components/schemas/');
    assert.ok(defs, `${rt.kind} has definitions`);
    const root = defs.schemas.get(defs.root)!;
    assert.deepEqual(root['x-kubernetes-group-version-kind'], [{ group: rt.group, version: rt.version, kind: rt.kind }]);
    const out: string[] = [];
    disagreements(knownFieldsOf(rt), schemaFor(rt), root, resolver(defs.schemas), rt.kind, out, new Set());
    assert.deepEqual(out, [], `${rt.kind}: the definitions disagree with the messages' other views`);
  }
});

test('references are upstream names and the defaults of list-map keys are published', () => {
  const defs = builtinKindDefinitions('v1', 'Pod', '#/components/schemas/')!;
  assert.equal(defs.root, 'io.k8s.api.core.v1.Pod');
  const pod = defs.schemas.get('io.k8s.api.core.v1.Pod')!;
  assert.deepEqual((pod['properties'] as Record<string, OpenApiSchema>)['metadata'], { allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }] });
  const port = defs.schemas.get('io.k8s.api.core.v1.ContainerPort')!;
  assert.equal((port['properties'] as Record<string, OpenApiSchema>)['protocol']!['default'], 'TCP');
  const v2 = builtinKindDefinitions('v1', 'Pod', '#/definitions/')!;
  assert.deepEqual((v2.schemas.get('io.k8s.api.core.v1.Pod')!['properties'] as Record<string, OpenApiSchema>)['metadata'], { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' });
});

test('the Swagger 2.0 document describes each object PATCH with its kind and the dryRun, fieldManager and fieldValidation parameters', async () => {
  const { openApiV2Document } = await import('../../src/apiserver/openapi/v2.js');
  const { patchablePaths } = await import('../../src/apiserver/openapi/v3.js');
  const protobuf = (await import('protobufjs')).default;
  const types = [
    { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true, definitions: () => undefined },
    { group: '', version: 'v1', resource: 'namespaces', kind: 'Namespace', namespaced: false, definitions: () => undefined },
    { group: 'example.com', version: 'v1', resource: 'readonlies', kind: 'ReadOnly', namespaced: false, verbs: ['get', 'list'], definitions: () => undefined },
  ];
  const paths = () => patchablePaths(types);
  const json = JSON.parse(String(openApiV2Document('v1.33.0', 'application/json', () => ({}), paths).body)) as { paths: Record<string, { patch: { parameters: { name: string; in: string }[]; 'x-kubernetes-group-version-kind': unknown } }> };
  assert.deepEqual(Object.keys(json.paths), ['/api/v1/namespaces/{namespace}/pods/{name}', '/api/v1/namespaces/{name}']);
  const patch = json.paths['/api/v1/namespaces/{name}']!.patch;
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'Namespace' });
  assert.deepEqual(patch.parameters.map((p) => `${p.in}:${p.name}`).sort(), ['query:dryRun', 'query:fieldManager', 'query:fieldValidation']);

  // The protobuf form, read with gnostic's field numbers (the contract kubectl's decoder holds us to).
  const root = protobuf.parse(`syntax = "proto3"; package t;
    message Any { string yaml = 2; }
    message NamedAny { string name = 1; Any value = 2; }
    message Q { string in = 2; string name = 4; }
    message NB { Q query = 3; }
    message P { NB non_body = 2; }
    message PI { P parameter = 1; }
    message Op { repeated PI parameters = 8; repeated NamedAny vendor_extension = 13; }
    message Item { Op patch = 8; }
    message NamedItem { string name = 1; Item value = 2; }
    message Paths { repeated NamedItem path = 2; }
    message Doc { string swagger = 1; Paths paths = 8; }`, { keepCase: true }).root;
  const doc = root.lookupType('t.Doc').toObject(root.lookupType('t.Doc').decode(openApiV2Document('v1.33.0', 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf', () => ({}), paths).body as Uint8Array)) as {
    paths: { path: { name: string; value: { patch: { parameters: { parameter: { non_body: { query: { name: string; in: string } } } }[]; vendor_extension: { name: string; value: { yaml: string } }[] } } }[] };
  };
  const pod = doc.paths.path.find((p) => p.name === '/api/v1/namespaces/{namespace}/pods/{name}')!.value.patch;
  assert.ok(pod.parameters.some((p) => p.parameter.non_body.query.name === 'dryRun' && p.parameter.non_body.query.in === 'query'));
  const gvk = pod.vendor_extension.find((e) => e.name === 'x-kubernetes-group-version-kind')!.value.yaml;
  assert.match(gvk, /^group: ""\nversion: v1\nkind: Pod\n$/);
});
