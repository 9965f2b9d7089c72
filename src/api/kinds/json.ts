// Narrowing helpers for objects that arrive as arbitrary JSON. Stored objects may be missing any
// field or carry a wrong type, and printers/validators must never throw on them.

export type JsonObject = Record<string, unknown>;

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value as an object, or an empty one (never shared: safe to read, pointless to write). */
export function obj(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

export function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Array elements that are objects, with their original indexes (validation paths need them). */
export function objArr(v: unknown): JsonObject[] {
  return arr(v).map((e) => obj(e));
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

export function optStr(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function optNum(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function bool(v: unknown): boolean {
  return v === true;
}

/** String-valued entries only; anything else in the map is dropped. */
export function strMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(v)) return out;
  for (const [k, val] of Object.entries(v)) if (typeof val === 'string') out[k] = val;
  return out;
}

/** parent[key] as an object, created (or replaced if not an object) so defaulting can write into it. */
export function child(parent: JsonObject, key: string): JsonObject {
  const v = parent[key];
  if (isObject(v)) return v;
  const created: JsonObject = {};
  parent[key] = created;
  return created;
}

/** parent[key] as an array of objects for in-place defaulting; non-object elements are left alone. */
export function childObjects(parent: JsonObject, key: string): JsonObject[] {
  const v = parent[key];
  return Array.isArray(v) ? v.filter(isObject) : [];
}

export function isEmptyValue(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) return Object.keys(v).length === 0;
  return false;
}

/**
 * Deep equality the way upstream's semantic comparison treats decoded objects: a missing field, null,
 * an empty list and an empty map are all "unset" and compare equal.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isEmptyValue(a) && isEmptyValue(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => semanticEqual(v, b[i]));
  }
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b)) return false;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return a === b;
}

export function deepClone<T>(v: T): T {
  return v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T);
}
