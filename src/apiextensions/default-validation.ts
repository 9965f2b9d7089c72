// Checks of `default` values in a structural schema (apiextensions-apiserver schema/defaulting
// validation.go): a default must survive pruning unchanged and validate against its own schema,
// or every object defaulted from it would be refused or silently altered.
import type { StatusCause } from '../api/types.js';
import { invalidRendered } from '../api/validation.js';
import { goBadValue } from './go-format.js';
import { deepCopyJSON, hasDefault, itemsSchema, propertyEntries, type JSONSchemaProps } from './json-schema.js';
import { validateEmbeddedResources, validateSchemaOnly } from './object-validation.js';
import { jsonEqual } from './openapi-validator.js';
import { prune } from './pruning.js';

const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/** Default-value errors of a structural schema rooted at a resource, with paths under `path`. */
export function validateDefaults(schema: JSONSchemaProps, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  // The schema root is a resource: its apiVersion/kind/metadata are resource meta.
  const root = schema['x-kubernetes-embedded-resource'] ? schema : { ...schema, 'x-kubernetes-embedded-resource': true };
  walk(root, path, false, out);
  return out;
}

function walk(s: JSONSchemaProps, path: string, insideMeta: boolean, out: StatusCause[]): void {
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (embedded) insideMeta = false;
  if (hasDefault(s)) out.push(...checkDefault(s, `${path}.default`, insideMeta));
  // Defaults under additionalProperties are not followed, as upstream.
  const items = itemsSchema(s);
  if (items) walk(items, `${path}.items`, insideMeta, out);
  for (const [k, p] of propertyEntries(s)) walk(p, `${path}.properties[${k}]`, insideMeta || (embedded && META_FIELDS.has(k)), out);
}

function checkDefault(s: JSONSchemaProps, path: string, insideMeta: boolean): StatusCause[] {
  const value = s.default;
  if (insideMeta) return validateSchemaOnly(value, s, path);
  const out: StatusCause[] = [];
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const pruned = deepCopyJSON(value);
  prune(pruned, s, embedded);
  if (!jsonEqual(pruned, value)) out.push(invalidRendered(path, goBadValue(value), 'must not have unknown fields'));
  // Later stages only run when the earlier ones pass, as upstream chains them.
  const typeMeta = embedded ? typeMetaCoercion(value, path) : [];
  if (typeMeta.length > 0) return [...out, ...typeMeta];
  const meta = validateEmbeddedResources(value, s, path, embedded);
  if (meta.length > 0) return [...out, ...meta];
  return [...out, ...validateSchemaOnly(value, s, path)];
}

// Decoding an embedded resource needs string apiVersion and kind; upstream reports the first bad one.
function typeMetaCoercion(value: unknown, path: string): StatusCause[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  for (const k of ['apiVersion', 'kind']) {
    const v = (value as Record<string, unknown>)[k];
    if (v !== undefined && typeof v !== 'string') return [invalidRendered(`${path}.${k}`, goBadValue(v), 'must be a string')];
  }
  return [];
}
