// Plain-JSON helpers shared by the patch engines. Patches arrive as parsed JSON of unknown shape,
// so everything here narrows `unknown` instead of trusting it.

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An own member only: patches must never reach inherited properties such as `__proto__`. */
export function own(obj: JsonObject, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/** Keys a patch may not write, because assigning them would rewire prototypes. */
export function isUnsafeKey(key: string): boolean {
  return key === '__proto__';
}

export function isScalar(v: unknown): v is string | number | boolean | null {
  return v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

export { deepClone as clone, jsonEqual as deepEqual } from '../../api/kinds/json.js';

/** Drops null members of objects, recursing into arrays' objects: what a typed Go decode does to nulls. */
export function pruneNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map((x) => (isObject(x) || Array.isArray(x) ? pruneNulls(x) : x));
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) {
    if (x === null || x === undefined || isUnsafeKey(k)) continue;
    out[k] = pruneNulls(x);
  }
  return out;
}

/**
 * Renders a value the way Go's `%v` prints decoded JSON, so error messages read like upstream's
 * (`map[name:web]`, `[a b]`, `<nil>`).
 */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

/** Go's name for the JSON type of a value, as encoding/json reports it in unmarshal errors. */
export function goJsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'boolean') return 'bool';
  return typeof v;
}

/** JSON text with object keys sorted, as Go's encoders emit maps. */
export function sortedJson(v: unknown): string {
  return JSON.stringify(sortKeys(v));
}

/** What Go's json.Encoder writes: sorted map keys, HTML-safe escapes and a trailing newline. */
export function goEncoderJson(v: unknown): string {
  const escapes: Record<string, string> = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' };
  return `${sortedJson(v).replace(/[<>&\u2028\u2029]/g, (c) => escapes[c]!)}\n`;
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sortKeys(v[k]);
  return out;
}
