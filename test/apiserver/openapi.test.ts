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
