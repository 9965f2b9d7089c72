// Structural defaulting (apiextensions-apiserver schema/defaulting). Runs on pruned objects, on
// read and on write, so a default added to a CRD shows up on objects stored before it existed.
import { additionalPropertiesSchema, deepCopyJSON, hasDefault, itemsSchema, propertyEntries, propertyOf, type JSONSchemaProps } from './json-schema.js';

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonNullableNull(v: unknown, s: JSONSchemaProps | undefined): s is JSONSchemaProps {
  return v === null && s !== undefined && s.nullable !== true;
}

function fieldSchema(s: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
  return propertyOf(s, key) ?? (s ? additionalPropertiesSchema(s) : undefined);
}

/**
 * Fills defaults into `obj` in place, as upstream does after decoding: first a null in a
 * non-nullable field without a default is dropped (the field is as good as unset), then every
 * missing property with a default gets a deep copy of it, and a null in a non-nullable field with a
 * default is replaced by it. Recurses through properties, items and additionalProperties, and
 * into the defaults just inserted, so nested defaults apply inside them too.
 */
export function applyDefaults(obj: unknown, schema: JSONSchemaProps): void {
  dropNonNullableNullsWithoutDefaults(obj, schema);
  fill(obj, schema);
}

function dropNonNullableNullsWithoutDefaults(x: unknown, s: JSONSchemaProps | undefined): void {
  if (Array.isArray(x)) {
    const items = s ? itemsSchema(s) : undefined;
    for (const v of x) dropNonNullableNullsWithoutDefaults(v, items);
    return;
  }
  if (!isMap(x)) return;
  for (const k of Object.keys(x)) {
    const sub = fieldSchema(s, k);
    if (isNonNullableNull(x[k], sub) && !hasDefault(sub)) delete x[k];
    else dropNonNullableNullsWithoutDefaults(x[k], sub);
  }
}

function fill(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = itemsSchema(s);
    for (let i = 0; i < x.length; i++) {
      if (isNonNullableNull(x[i], items) && hasDefault(items)) x[i] = deepCopyJSON(items.default);
      fill(x[i], items);
    }
    return;
  }
  if (!isMap(x)) return;
  for (const [k, prop] of propertyEntries(s)) {
    if (!hasDefault(prop)) continue;
    if (!Object.prototype.hasOwnProperty.call(x, k) || isNonNullableNull(x[k], prop)) x[k] = deepCopyJSON(prop.default);
  }
  const additional = additionalPropertiesSchema(s);
  for (const k of Object.keys(x)) {
    const prop = propertyOf(s, k);
    if (prop) fill(x[k], prop);
    else if (additional) {
      if (isNonNullableNull(x[k], additional) && hasDefault(additional)) x[k] = deepCopyJSON(additional.default);
      fill(x[k], additional);
    }
  }
}
