// Validation of a custom object against its version's schema, in the three passes upstream's
// custom resource strategy runs: the OpenAPI schema validator, embedded resources' TypeMeta and
// ObjectMeta, and the uniqueness of x-kubernetes-list-type set/map lists.
import type { StatusCause } from '../api/types.js';
import { field } from '../api/errors.js';
import { duplicateRendered, invalidRendered, isDNS1035Label, pathSegmentName, validateObjectMeta } from '../api/validation.js';
import { goBadValue, goSharpV } from './go-format.js';
import { additionalPropertiesSchema, itemsSchema, propertyOf, type JSONSchemaProps } from './json-schema.js';
import { jsonEqual, openAPIErrorsToCauses, openAPIValidate } from './openapi-validator.js';

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function child(parent: string, name: string): string {
  return parent ? `${parent}.${name}` : name;
}

/**
 * Validates an already pruned and defaulted custom object (or any value, with `path` naming where
 * it sits, "" for a whole object). Causes use upstream's paths ("spec.replicas",
 * "spec.ports[0]") and messages ('Invalid value: "string": spec.replicas in body must be of type
 * integer: "string"'). The root's metadata is left to generic ObjectMeta validation; only what the
 * schema itself says about it applies.
 */
export function validateAgainstSchema(value: unknown, schema: JSONSchemaProps, path: string): StatusCause[] {
  return [...validateSchemaOnly(value, schema, path), ...validateEmbeddedResources(value, schema, path, false), ...validateListSetsAndMaps(value, schema, path)];
}

/** Just the OpenAPI validator pass (what upstream runs on CRD default values). */
export function validateSchemaOnly(value: unknown, schema: JSONSchemaProps, path: string): StatusCause[] {
  return openAPIErrorsToCauses(path, openAPIValidate(value, schema));
}

/** TypeMeta and ObjectMeta of x-kubernetes-embedded-resource values; of the value itself too with isResourceRoot. */
export function validateEmbeddedResources(value: unknown, schema: JSONSchemaProps, path: string, isResourceRoot: boolean): StatusCause[] {
  const s = isResourceRoot && !schema['x-kubernetes-embedded-resource'] ? { ...schema, 'x-kubernetes-embedded-resource': true } : schema;
  const out: StatusCause[] = [];
  walkEmbedded(value, s, path, out);
  return out;
}

function walkEmbedded(x: unknown, s: JSONSchemaProps | undefined, path: string, out: StatusCause[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = itemsSchema(s);
    x.forEach((v, i) => walkEmbedded(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!isMap(x)) return;
  if (s['x-kubernetes-embedded-resource']) out.push(...embeddedResource(x, path));
  const additional = additionalPropertiesSchema(s);
  for (const [k, v] of Object.entries(x)) {
    const prop = propertyOf(s, k);
    if (prop) walkEmbedded(v, prop, child(path, k), out);
    else if (additional) walkEmbedded(v, additional, `${path}[${k}]`, out);
  }
}

const KUBE_ONLY_FINALIZER_RULE = 'name is neither a standard finalizer name nor is it fully qualified';

function embeddedResource(x: Json, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  // apiVersion and kind are required, metadata is not.
  if (!Object.prototype.hasOwnProperty.call(x, 'apiVersion')) out.push(field.required(child(path, 'apiVersion')));
  if (!Object.prototype.hasOwnProperty.call(x, 'kind')) out.push(field.required(child(path, 'kind')));
  for (const [k, v] of Object.entries(x)) {
    const p = child(path, k);
    if (k === 'apiVersion') {
      if (typeof v !== 'string') out.push(invalidRendered(p, goBadValue(v), 'must be a string'));
      else if (v === '') out.push(field.invalid(p, v, 'must not be empty'));
      else if ((v.match(/\//g) ?? []).length > 1) out.push(field.invalid(p, v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      if (typeof v !== 'string') out.push(invalidRendered(p, goBadValue(v), 'must be a string'));
      else if (v === '') out.push(field.invalid(p, v, 'must not be empty'));
      else {
        const errs = isDNS1035Label(v.toLowerCase());
        if (errs.length > 0) out.push(field.invalid(p, v, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
      }
    } else if (k === 'metadata') {
      if (!isMap(v)) {
        out.push(invalidRendered(p, goBadValue(v), `invalid metadata: expected object, got ${goTypeName(v)}`));
        continue;
      }
      // Upstream validates embedded metadata with path-segment names and a stand-in for a
      // missing name, as generic (not core) ObjectMeta validation.
      const meta = { ...v, name: typeof v.name === 'string' && v.name !== '' ? v.name : 'fakename' };
      const namespaced = typeof v.namespace === 'string' && v.namespace !== '';
      out.push(...validateObjectMeta(meta, namespaced, pathSegmentName, p).filter((c) => !c.message?.endsWith(KUBE_ONLY_FINALIZER_RULE)));
    }
  }
  return out;
}

function goTypeName(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  if (typeof v === 'boolean') return 'bool';
  return '[]interface {}';
}

/** Uniqueness of x-kubernetes-list-type=set elements and of list-type=map keys. */
export function validateListSetsAndMaps(value: unknown, schema: JSONSchemaProps, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (isMap(value)) listsInObject(value, schema, path, out);
  return out;
}

function listsInObject(x: Json, s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  const additional = additionalPropertiesSchema(s);
  if (additional) for (const [k, v] of Object.entries(x)) listsIn(v, additional, `${path}[${k}]`, out);
  for (const [k, v] of Object.entries(x)) {
    const prop = propertyOf(s, k);
    if (prop) listsIn(v, prop, child(path, k), out);
  }
}

function listsIn(x: unknown, s: JSONSchemaProps, path: string, out: StatusCause[]): void {
  if (isMap(x)) {
    listsInObject(x, s, path, out);
    return;
  }
  if (!Array.isArray(x)) return;
  const listType = s['x-kubernetes-list-type'];
  if (listType === 'set') {
    for (const i of firstRepeats(x)) out.push(duplicateRendered(`${path}[${i}]`, goBadValue(x[i])));
  } else if (listType === 'map') {
    out.push(...listMapDuplicates(x, s['x-kubernetes-list-map-keys'] ?? [], path));
  }
  const items = itemsSchema(s);
  if (items) x.forEach((v, i) => listsIn(v, items, `${path}[${i}]`, out));
}

/** Index of the second appearance of each repeated element (later repeats are not reported again). */
function firstRepeats(list: unknown[]): number[] {
  const out: number[] = [];
  const counts: { v: unknown; n: number }[] = [];
  list.forEach((v, i) => {
    const seen = counts.find((c) => jsonEqual(c.v, v));
    if (!seen) counts.push({ v, n: 1 });
    else if (seen.n++ === 1) out.push(i);
  });
  return out;
}

const UNSPECIFIED = Symbol('unspecified key');

function listMapDuplicates(list: unknown[], keys: string[], path: string): StatusCause[] {
  for (let i = 0; i < list.length; i++) {
    const x = list[i];
    if (x !== null && !isMap(x)) return [invalidRendered(`${path}[${i}]`, goBadValue(x), 'must be an object for an array of list-type map')];
  }
  if (list.length <= 1) return [];
  const items = list as (Json | null)[];
  if (keys.length === 1) {
    const k = keys[0]!;
    // A missing key (or a null element) counts as one more distinct key value.
    const values = items.map((x) => (x !== null && Object.prototype.hasOwnProperty.call(x, k) ? x[k] : UNSPECIFIED));
    return firstRepeats(values).map((i) => duplicateRendered(`${path}[${i}]`, goSharpV(values[i] === UNSPECIFIED ? {} : { [k]: values[i] })));
  }
  const composite = items.map((x) => {
    const key: Json = {};
    if (x !== null) for (const k of keys) if (Object.prototype.hasOwnProperty.call(x, k)) key[k] = x[k];
    return key;
  });
  return firstRepeats(composite).map((i) => duplicateRendered(`${path}[${i}]`, goSharpV(composite[i])));
}
