// Structural pruning (apiextensions-apiserver schema/pruning): drop what the schema does not
// declare, so stored custom objects only carry specified fields.
import { additionalPropertiesSchema, itemsSchema, propertyOf, type JSONSchemaProps } from './json-schema.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

// ObjectMeta's JSON fields. Upstream round-trips embedded metadata through ObjectMeta, which loses
// everything else; naming the fields gets the same result without a typed decode.
const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Removes, in place, fields of `obj` the schema does not specify and returns their paths
 * ("spec.foo", "spec.items[0].bar") for unknown-field warnings or strict errors. With
 * isResourceRoot, apiVersion/kind/metadata at the root are kept untouched (the API server handles
 * ObjectMeta); x-kubernetes-embedded-resource nodes keep theirs too, with metadata cut down to
 * ObjectMeta's fields.
 */
export function prune(obj: unknown, schema: JSONSchemaProps, isResourceRoot: boolean): string[] {
  const pruned: string[] = [];
  const root = isResourceRoot && !schema['x-kubernetes-embedded-resource'] ? { ...schema, 'x-kubernetes-embedded-resource': true } : schema;
  walk(obj, root, '', pruned, isResourceRoot);
  return pruned;
}

function join(parent: string, key: string): string {
  return parent ? `${parent}.${key}` : key;
}

// Below x-kubernetes-preserve-unknown-fields unknown keys stay, but specified ones are still pruned.
function walk(x: unknown, s: JSONSchemaProps | undefined, path: string, pruned: string[], isRoot: boolean): void {
  const preserve = s?.['x-kubernetes-preserve-unknown-fields'] === true;
  if (Array.isArray(x)) {
    const items = s ? itemsSchema(s) : undefined;
    x.forEach((v, i) => walk(v, items, `${path}[${i}]`, pruned, false));
    return;
  }
  if (!isMap(x)) return;
  if (!s) {
    // Nothing below an unspecified node is known: every key goes.
    for (const k of Object.keys(x)) {
      pruned.push(join(path, k));
      delete x[k];
    }
    return;
  }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const k of Object.keys(x)) {
    if (embedded && META_FIELDS.has(k)) continue;
    const prop = propertyOf(s, k);
    if (prop) walk(x[k], prop, join(path, k), pruned, false);
    else if (s.additionalProperties !== undefined) walk(x[k], additionalPropertiesSchema(s), join(path, k), pruned, false);
    else if (!preserve) {
      // Upstream drops apiVersion/kind/metadata at the top of a non-resource root silently.
      if (!META_FIELDS.has(k) || path !== '') pruned.push(join(path, k));
      delete x[k];
    }
  }
  if (embedded && !isRoot) pruneEmbeddedMeta(x, path, pruned);
}

function pruneEmbeddedMeta(x: Json, path: string, pruned: string[]): void {
  const meta = x.metadata;
  if (!isMap(meta)) return;
  const metaPath = join(path, 'metadata');
  for (const k of Object.keys(meta)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      pruned.push(join(metaPath, k));
      delete meta[k];
    }
  }
  // A zero creationTimestamp serializes as null; upstream removes it after the round trip.
  if (meta.creationTimestamp === null) delete meta.creationTimestamp;
}

