// Strategic merge patch (application/strategic-merge-patch+json), the patch kubectl sends for
// cordon, taint and client-side apply. It is a JSON merge patch that knows, per field, whether a
// list merges element by element (by a merge key) or is replaced, and that honours directives:
//   $patch: replace | delete | merge     on a map or a list element
//   $retainKeys: [..]                    keep only these keys of the live map
//   $setElementOrder/<list>: [..]        the order the client wants for a merged list
//   $deleteFromPrimitiveList/<list>: [..] remove these scalars from a merged list
//   null                                 delete the key
// Semantics follow upstream's apimachinery strategicpatch, applied server-side; where upstream
// would store a directive verbatim (a new list that still carries `$patch`), we apply it instead.
import type { KubeObject } from '../../api/types.js';
import type { SchemaKind } from '../../api/schema/merge-schema.js';
import { badRequest } from '../../api/errors.js';
import { smpErrors } from './errors.js';
import { clone, deepEqual, goFormat, goJsonType, isObject, isUnsafeKey, own, pruneNulls, type JsonObject } from './json.js';
import { asList, childSchema, schemaFor, type ListSchema, type Schema } from '../../api/schema/merge-schema.js';

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_FROM_PRIMITIVE_LIST = '$deleteFromPrimitiveList';
const SET_ELEMENT_ORDER = '$setElementOrder';

/** Returns the patched copy; neither argument is modified. */
export function applyStrategicMergePatch(obj: KubeObject, patch: unknown, gvk: SchemaKind): KubeObject {
  // Go decodes `null` into a nil map, which patches nothing.
  if (patch === null || patch === undefined) return clone(obj);
  if (!isObject(patch)) {
    throw badRequest(`json: cannot unmarshal ${goJsonType(patch)} into Go value of type map[string]interface {}`);
  }
  return mergeMap(clone(obj) as JsonObject, clone(patch), schemaFor(gvk)) as KubeObject;
}

/** Merges `patch` into `original` (both owned by the caller, so mutated freely). */
function mergeMap(original: JsonObject | undefined, patch: JsonObject, schema: Schema | undefined): JsonObject {
  if (DIRECTIVE in patch) {
    const directive = patch[DIRECTIVE];
    delete patch[DIRECTIVE];
    if (directive === 'replace') return mergeMap(undefined, patch, schema);
    // Upstream leaves an empty map behind rather than removing the key.
    if (directive === 'delete') return {};
    if (directive !== 'merge') throw smpErrors.other(`unknown patch type: ${goFormat(directive)} in map: ${goFormat({ ...patch, [DIRECTIVE]: directive })}`);
  }
  const target = original ?? {};
  applyRetainKeys(target, patch);
  mergeOrderedLists(target, patch, schema);

  for (const [rawKey, value] of Object.entries(patch)) {
    if (isUnsafeKey(rawKey)) continue;
    if (rawKey.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      deleteFromPrimitiveList(target, extractKey(rawKey, DELETE_FROM_PRIMITIVE_LIST), value);
      continue;
    }
    // Other `$` keys are directives this server doesn't know; no API field starts with `$`.
    if (rawKey.startsWith('$')) continue;
    const key = rawKey;
    if (value === null || value === undefined) {
      delete target[key];
      continue;
    }
    const sub = childSchema(schema, key);
    const current = own(target, key);
    if (isObject(current) && isObject(value)) {
      target[key] = mergeMap(current, value, sub);
    } else if (Array.isArray(current) && Array.isArray(value)) {
      target[key] = mergeList(current, value, asList(sub));
    } else {
      target[key] = fresh(value, sub);
    }
  }
  return target;
}

/** A patch value with nothing to merge into: its directives still apply and its nulls vanish. */
function fresh(value: unknown, schema: Schema | undefined): unknown {
  if (isObject(value)) return mergeMap(undefined, value, schema);
  if (Array.isArray(value)) return mergeList([], value, asList(schema));
  return value;
}

function mergeList(original: unknown[], patch: unknown[], schema: ListSchema | undefined): unknown[] {
  if (schema?.strategy !== 'merge') return patch.map((v) => (isObject(v) ? mergeMap(undefined, v, schema?.items) : pruneNulls(v)));
  return mergeSlice(original, patch, schema);
}

function mergeSlice(original: unknown[], patch: unknown[], schema: ListSchema): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const isMap = elementsAreMaps(original, patch);
  const mergeKey = schema.mergeKey ?? '';
  let merged: unknown[];
  let base = original;
  let patchItems = patch;
  if (!isMap) {
    merged = dedupe([...original, ...patch]);
  } else {
    if (!mergeKey) throw smpErrors.other('cannot merge lists without merge key for type struct');
    [base, patchItems] = applyListDirectives(original, patch as JsonObject[], mergeKey, schema.items);
    merged = mergeByKey([...base], patchItems as JsonObject[], mergeKey, schema.items);
  }
  const [inPatch, serverOnly] = partition(merged, patchItems, mergeKey, isMap);
  return normalizeOrder(inPatch, serverOnly, patchItems, base, mergeKey, isMap);
}

/** The element kind of the lists to merge: objects, or scalars of one JSON type. */
function elementsAreMaps(...lists: unknown[][]): boolean {
  let kind: string | undefined;
  for (const list of lists) {
    for (const v of list) {
      const k = Array.isArray(v) ? 'array' : goJsonType(v);
      if (k === 'array') throw smpErrors.noListOfLists();
      if (kind === undefined) kind = k;
      else if (kind !== k) throw smpErrors.other(`list element types are not identical: ${goFormat(lists)}`);
    }
  }
  return kind === 'object';
}

/** Handles `$patch` elements of a keyed list; returns the base list and the remaining patch items. */
function applyListDirectives(original: unknown[], patch: JsonObject[], mergeKey: string, items: Schema | undefined): [unknown[], JsonObject[]] {
  const remaining: JsonObject[] = [];
  let base = original;
  let replace = false;
  for (const item of patch) {
    if (!(DIRECTIVE in item)) {
      remaining.push(item);
      continue;
    }
    const directive = item[DIRECTIVE];
    if (directive === 'delete') {
      if (!(mergeKey in item)) throw noMergeKey(item, mergeKey);
      base = base.filter((o) => !(isObject(o) && mergeKey in o && keyEqual(o[mergeKey], item[mergeKey])));
    } else if (directive === 'replace') {
      replace = true;
    } else if (directive === 'merge') {
      const rest = { ...item };
      delete rest[DIRECTIVE];
      remaining.push(rest);
    } else {
      throw smpErrors.other(`unknown patch type: ${goFormat(directive)} in map: ${goFormat(item)}`);
    }
  }
  if (replace) return [remaining.map((v) => mergeMap(undefined, v, items)), []];
  return [base, remaining];
}

function mergeByKey(base: unknown[], patch: JsonObject[], mergeKey: string, items: Schema | undefined): unknown[] {
  for (const item of patch) {
    if (!(mergeKey in item)) throw noMergeKey(item, mergeKey);
    const at = base.findIndex((o, i) => {
      if (!isObject(o)) throw smpErrors.other(`value for key ${i} is not a map.`);
      return mergeKey in o && keyEqual(o[mergeKey], item[mergeKey]);
    });
    if (at >= 0) base[at] = mergeMap(base[at] as JsonObject, item, items);
    else base.push(mergeMap(undefined, item, items));
  }
  return base;
}

/** Splits merged items into those the patch (or order list) names and those only the server had. */
function partition(merged: unknown[], named: unknown[], mergeKey: string, isMap: boolean): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const item of merged) {
    if (isMap && !(isObject(item) && mergeKey in item)) throw noMergeKey(item, mergeKey);
    (indexIn(named, item, mergeKey, isMap) >= 0 ? inPatch : serverOnly).push(item);
  }
  return [inPatch, serverOnly];
}

/**
 * Orders patch items by `patchOrder` and server-only items by their live order, then interleaves
 * them: a server-only item goes before a patch item only when both had that relative order live.
 */
function normalizeOrder(inPatch: unknown[], serverOnly: unknown[], patchOrder: unknown[], serverOrder: unknown[], mergeKey: string, isMap: boolean): unknown[] {
  const right = sortBy(inPatch, patchOrder, mergeKey, isMap);
  const left = sortBy(serverOnly, serverOrder, mergeKey, isMap);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey, isMap);
      const ri = indexIn(serverOrder, right[j], mergeKey, isMap);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function sortBy(items: unknown[], order: unknown[], mergeKey: string, isMap: boolean): unknown[] {
  if (isMap) {
    for (const v of [...items, ...order]) if (!isObject(v) || !(mergeKey in v)) throw noMergeKey(v, mergeKey);
  }
  const rank = (v: unknown) => {
    const i = indexIn(order, v, mergeKey, isMap);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return items
    .map((v, i) => ({ v, i, r: rank(v) }))
    .sort((a, b) => a.r - b.r || a.i - b.i)
    .map((x) => x.v);
}

function indexIn(list: unknown[], item: unknown, mergeKey: string, isMap: boolean): number {
  const keyOf = (v: unknown) => (isMap ? (isObject(v) ? v[mergeKey] : undefined) : v);
  const want = keyOf(item);
  return list.findIndex((v) => keyEqual(keyOf(v), want));
}

function keyEqual(a: unknown, b: unknown): boolean {
  return a === b || (typeof a === 'object' && a !== null && deepEqual(a, b));
}

function dedupe(list: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of list) if (!out.some((o) => keyEqual(o, v))) out.push(v);
  return out;
}

function noMergeKey(item: unknown, mergeKey: string) {
  return smpErrors.other(`map: ${goFormat(item)} does not contain declared merge key: ${mergeKey}`);
}

function extractKey(key: string, prefix: string): string {
  const slash = key.indexOf('/');
  if (slash < 0 || key.slice(0, slash) !== prefix) {
    throw prefix === DELETE_FROM_PRIMITIVE_LIST ? smpErrors.badPrimitiveList() : smpErrors.badSetElementOrder();
  }
  return key.slice(slash + 1);
}

function deleteFromPrimitiveList(target: JsonObject, key: string, toDelete: unknown): void {
  if (!Array.isArray(toDelete)) throw smpErrors.badPrimitiveList();
  const current = own(target, key);
  if (!Array.isArray(current)) return;
  target[key] = current.filter((v) => isObject(v) || !toDelete.some((d) => keyEqual(d, v)));
}

/** `$retainKeys`: drop live keys the client no longer lists; every patched key must be listed. */
function applyRetainKeys(target: JsonObject, patch: JsonObject): void {
  if (!(RETAIN_KEYS in patch)) return;
  const keys = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(keys)) throw smpErrors.badRetainKeys();
  const retained = new Set<unknown>(keys);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER)) continue;
    if (!retained.has(k)) throw smpErrors.badRetainKeys();
  }
  for (const k of Object.keys(target)) if (!retained.has(k)) delete target[k];
}

/**
 * `$setElementOrder/<list>`: merge the list (if patched) and order the result. Precedence:
 * the order list, then the patch's own order, then the live order.
 */
function mergeOrderedLists(target: JsonObject, patch: JsonObject, schema: Schema | undefined): void {
  for (const directiveKey of Object.keys(patch)) {
    if (!directiveKey.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[directiveKey];
    delete patch[directiveKey];
    if (!Array.isArray(order)) throw smpErrors.badSetElementOrder();
    const key = extractKey(directiveKey, SET_ELEMENT_ORDER);
    if (isUnsafeKey(key)) continue;
    const listSchema = asList(childSchema(schema, key));
    const mergeKey = listSchema?.mergeKey ?? '';
    const live = own(target, key);
    const patched = own(patch, key);
    const hasLive = live !== undefined && live !== null;
    const hasPatch = patched !== undefined && patched !== null;
    if (hasLive && !Array.isArray(live)) throw smpErrors.other(`expected a []interface {}, but received a ${goType(live)}`);
    if (hasPatch && !Array.isArray(patched)) throw smpErrors.other(`expected a []interface {}, but received a ${goType(patched)}`);
    const liveList = hasLive ? (live as unknown[]) : [];
    const patchList = hasPatch ? (patched as unknown[]) : [];
    validateAgainstOrder(patchList, order, mergeKey);
    if (!hasLive && !hasPatch) continue;
    const merged = hasPatch ? mergeList(liveList, patchList, listSchema) : liveList;
    if (hasPatch) delete patch[key];
    if (merged.length === 0) {
      target[key] = merged;
      continue;
    }
    const isMap = elementsAreMaps(merged);
    const [inOrder, serverOnly] = partition(merged, order, mergeKey, isMap && mergeKey !== '');
    target[key] = normalizeOrder(inOrder, serverOnly, order, liveList, mergeKey, isMap && mergeKey !== '');
  }
}

/** The patch list's items must appear in the order list, in the same relative order. */
function validateAgainstOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (patchList.length === 0 || order.length === 0) return;
  const items = mergeKey ? patchList.filter((v) => !(isObject(v) && v[DIRECTIVE] === 'delete')) : patchList;
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    const item = items[p];
    if (isObject(item) && DIRECTIVE in item) {
      p++;
      continue;
    }
    let equal: boolean;
    if (mergeKey) {
      const ord = order[o];
      if (!isObject(item) || !isObject(ord)) throw smpErrors.other(`expected a map[string]interface {}, but received a ${goType(isObject(item) ? ord : item)}`);
      if (!(mergeKey in item)) throw noMergeKey(item, mergeKey);
      if (!(mergeKey in ord)) throw noMergeKey(ord, mergeKey);
      equal = keyEqual(item[mergeKey], ord[mergeKey]);
    } else {
      equal = keyEqual(item, order[o]);
    }
    if (equal) p++;
    o++;
  }
  if (p < items.length && o >= order.length) {
    throw smpErrors.other(`The order in patch list:\n${goFormat(patchList)}\n doesn't match ${SET_ELEMENT_ORDER} list:\n${goFormat(order)}\n`);
  }
}

function goType(v: unknown): string {
  if (Array.isArray(v)) return '[]interface {}';
  if (isObject(v)) return 'map[string]interface {}';
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v === 'boolean' ? 'bool' : 'string';
}
