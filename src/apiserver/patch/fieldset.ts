// Turning objects into field sets, and diffing two objects into the sets of fields added, modified
// and removed. These mirror structured-merge-diff's rules, which decide what a manager owns:
//   - a scalar, a null, an atomic list or an atomic map is one leaf;
//   - declared struct fields are walked through, the entries of free-form maps are members too;
//   - each element of a keyed list or set is a member, and keyed elements are walked into.
import { badRequest } from '../../api/errors.js';
import type { SchemaKind } from '../../api/schema/merge-schema.js';
import { FieldSet, comparePathElements, compareStrings, fieldElement, keyElement, pathString, valueElement, type Path, type PathElement } from './fieldpath.js';
import { deepEqual, isObject, isScalar, type JsonObject } from './json.js';
import { asList, childSchema, isAtomicMap, isFreeFormMap, schemaFor, type ListSchema, type Schema } from '../../api/schema/merge-schema.js';

/** Fields that are never owned: identity and bookkeeping the server sets. Exact paths only. */
export const STRIPPED_FIELDS: FieldSet = FieldSet.fromPaths(
  [
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'creationTimestamp'],
    ['metadata', 'selfLink'],
    ['metadata', 'uid'],
    ['metadata', 'clusterName'],
    ['metadata', 'generation'],
    ['metadata', 'managedFields'],
    ['metadata', 'resourceVersion'],
  ].map((p) => p.map(fieldElement)),
);

/** The FieldsV1 document of every field `obj` sets: what an applier of `obj` would own. */
export function fieldSetOf(obj: unknown, gvk: SchemaKind): Record<string, unknown> {
  return toFieldSet(obj, schemaFor(gvk)).difference(STRIPPED_FIELDS).toFieldsV1();
}

export function toFieldSet(obj: unknown, schema: Schema | undefined): FieldSet {
  const set = new FieldSet();
  if (isObject(obj)) walkMap(obj, schema, [], set);
  return set;
}

function walk(v: unknown, s: Schema | undefined, path: Path, set: FieldSet): void {
  if (isObject(v)) walkMap(v, s, path, set);
  else if (Array.isArray(v)) walkList(v, s, path, set);
  else if (v !== null || !isComposite(s)) set.insert(path);
}

function isComposite(s: Schema | undefined): boolean {
  return (s?.type === 'struct' || (s?.type === 'map' && !s.atomic) || (s?.type === 'list' && s.listType !== 'atomic')) ?? false;
}

function walkMap(m: JsonObject, s: Schema | undefined, path: Path, set: FieldSet): void {
  if (isAtomicMap(s)) {
    set.insert(path);
    return;
  }
  const freeForm = isFreeFormMap(s);
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined) continue;
    const p = [...path, fieldElement(k)];
    walk(v, childSchema(s, k), p, set);
    if (freeForm) set.insert(p);
  }
}

function walkList(list: unknown[], s: Schema | undefined, path: Path, set: FieldSet): void {
  const ls = asList(s);
  if (!ls || ls.listType === 'atomic') {
    set.insert(path);
    return;
  }
  list.forEach((item, i) => {
    const p = [...path, listElement(ls, item, path, i)];
    if (ls.listType === 'map') walk(item, ls.items, p, set);
    set.insert(p);
  });
}

/** The path element naming `item` inside a keyed list or set. */
export function listElement(ls: ListSchema, item: unknown, path: Path, index: number): PathElement {
  if (ls.listType === 'set') {
    if (!isScalar(item)) throw badRequest(`${pathString(path)}: element ${index}: expected a scalar in a set, got ${JSON.stringify(item)}`);
    return valueElement(item);
  }
  if (!isObject(item)) throw badRequest(`${pathString(path)}: element ${index}: expected a map in an associative list`);
  const keys: Record<string, unknown> = {};
  for (const k of ls.keys ?? []) {
    const v = item[k] ?? ls.keyDefaults?.[k];
    if (v === undefined || v === null) {
      throw badRequest(`${pathString(path)}: element ${index}: associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`);
    }
    keys[k] = v;
  }
  return keyElement(keys);
}

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * Diffs `lhs` (before) against `rhs` (after). A node that appears or disappears as a whole is
 * itself added or removed along with its leaves; a struct Go always carries counts as present.
 */
export function compare(lhs: unknown, rhs: unknown, schema: Schema | undefined, exclude?: FieldSet): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  // Subtrees the caller filters out anyway (a status write's spec) are not walked.
  visit(lhs ?? {}, rhs ?? {}, schema, [], c, exclude);
  return c;
}

const mapLike = (v: unknown): boolean => v === undefined || v === null || isObject(v);
const listLike = (v: unknown): boolean => v === undefined || v === null || Array.isArray(v);

function visit(l: unknown, r: unknown, s: Schema | undefined, path: Path, c: Comparison, exclude: FieldSet | undefined): void {
  if (exclude?.member) return;
  if ((isObject(l) || isObject(r)) && mapLike(l) && mapLike(r) && !isAtomicMap(s)) {
    if (isEmptyish(l) && isEmptyish(r)) return leaf(l, r, path, c);
    const lm = isObject(l) ? l : undefined;
    const rm = isObject(r) ? r : undefined;
    const visitKey = (k: string): void => {
      const sub = childSchema(s, k);
      const lv = present(lm, k, sub);
      const rv = present(rm, k, sub);
      if (lv === undefined && rv === undefined) return;
      const pe = fieldElement(k);
      visit(lv, rv, sub, [...path, pe], c, exclude?.children.get(pe));
    };
    const always = alwaysPresentFields(s);
    if (!lm && always.length === 0) {
      // Every create takes this path for every map: no key union to build.
      for (const k of Object.keys(rm!)) visitKey(k);
    } else {
      for (const k of new Set([...Object.keys(lm ?? {}), ...Object.keys(rm ?? {}), ...always])) visitKey(k);
    }
    return node(l, r, path, c);
  }
  const ls = asList(s);
  if ((Array.isArray(l) || Array.isArray(r)) && listLike(l) && listLike(r) && ls && ls.listType !== 'atomic') {
    if (isEmptyish(l) && isEmptyish(r)) return leaf(l, r, path, c);
    const li = indexItems(Array.isArray(l) ? l : [], ls, path);
    const ri = indexItems(Array.isArray(r) ? r : [], ls, path);
    for (const pe of new Set([...li.keys(), ...ri.keys()])) {
      const p = [...path, pe];
      if (ls.listType === 'set') {
        if (!exclude?.children.get(pe)?.member) leaf(li.get(pe), ri.get(pe), p, c);
      } else visit(li.get(pe), ri.get(pe), ls.items, p, c, exclude?.children.get(pe));
    }
    return node(l, r, path, c);
  }
  leaf(l, r, path, c);
}

const NO_FIELDS: string[] = [];
const alwaysPresentCache = new WeakMap<Schema, string[]>();

/** Struct fields Go always serializes (schemas are static: computed once per schema node). */
function alwaysPresentFields(s: Schema | undefined): string[] {
  if (s?.type !== 'struct') return NO_FIELDS;
  let fields = alwaysPresentCache.get(s);
  if (!fields) {
    fields = Object.entries(s.fields)
      .filter(([, f]) => (f.type === 'struct' || f.type === 'list') && f.alwaysPresent)
      .map(([k]) => k);
    alwaysPresentCache.set(s, fields);
  }
  return fields;
}

/** A field's value, with what Go always serializes filled in (`{}` or null) when its parent exists. */
function present(m: JsonObject | undefined, k: string, s: Schema | undefined): unknown {
  const v = m?.[k];
  if (v !== undefined || m === undefined || !s) return v;
  if (s.type === 'struct' && s.alwaysPresent) return {};
  if (s.type === 'list' && s.alwaysPresent) return null;
  return v;
}

function isEmptyish(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);
}

function leaf(l: unknown, r: unknown, path: Path, c: Comparison): void {
  if (path.length === 0) return;
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
  else if (!deepEqual(l, r)) c.modified.insert(path);
}

function node(l: unknown, r: unknown, path: Path, c: Comparison): void {
  if (path.length === 0) return;
  if (l === undefined) c.added.insert(path);
  else if (r === undefined) c.removed.insert(path);
}

/** Keyed elements of a list; an element whose key can't be formed, or a repeat, is passed over. */
function indexItems(list: unknown[], ls: ListSchema, path: Path): Map<PathElement, unknown> {
  const out = new Map<PathElement, unknown>();
  list.forEach((item, i) => {
    let pe: PathElement;
    try {
      pe = listElement(ls, item, path, i);
    } catch {
      return;
    }
    if (!out.has(pe)) out.set(pe, item);
  });
  return out;
}

/**
 * The FieldsV1 document a create records for its writer: the fields `compare(undefined, created)`
 * reports added or modified, less `exclude`'s subtrees and `strip`'s exact members. Creates are
 * most writes; this builds the document in one walk instead of field sets that are diffed,
 * filtered and encoded (a third of the garbage a create made). A test holds it to the general path.
 */
export function createdFieldsV1(created: JsonObject, schema: Schema | undefined, exclude: FieldSet | undefined, strip: FieldSet): JsonObject {
  return createdNode({}, created, schema, exclude, strip, true) ?? {};
}

/**
 * `visit` for a create, encoding as it goes. In a create `l` is undefined, or `{}`/null where Go
 * always serializes a field, so the old side never contributes keys or list elements.
 */
function createdNode(l: unknown, r: unknown, s: Schema | undefined, exclude: FieldSet | undefined, strip: FieldSet | undefined, root: boolean): JsonObject | undefined {
  if (exclude?.member) return undefined;
  const ls = asList(s);
  if ((isObject(l) || isObject(r)) && mapLike(l) && mapLike(r) && !isAtomicMap(s) && !(isEmptyish(l) && isEmptyish(r))) {
    // Not both empty, so r is a map with entries.
    const rm = r as JsonObject;
    const keys = Object.keys(rm);
    for (const k of alwaysPresentFields(s)) if (!Object.hasOwn(rm, k)) keys.push(k);
    // Field elements share their "f:" prefix: ordering the names orders the elements.
    sortNames(keys);
    const member = l === undefined && !root && !strip?.member;
    let out: JsonObject | undefined;
    for (const k of keys) {
      const sub = childSchema(s, k);
      const lv = present(isObject(l) ? l : undefined, k, sub);
      const rv = present(rm, k, sub);
      if (lv === undefined && rv === undefined) continue;
      const pe = fieldElement(k);
      const child = createdNode(lv, rv, sub, exclude?.children.get(pe), strip?.children.get(pe), false);
      if (child) (out ??= member ? { '.': {} } : {})[pe] = child;
    }
    return out ?? (member ? {} : undefined);
  }
  if ((Array.isArray(l) || Array.isArray(r)) && listLike(l) && listLike(r) && ls && ls.listType !== 'atomic' && !(isEmptyish(l) && isEmptyish(r))) {
    const items = indexItems(r as unknown[], ls, []);
    const children: [PathElement, JsonObject][] = [];
    for (const [pe, item] of items) {
      const child = createdNode(undefined, item, ls.listType === 'set' ? undefined : ls.items, exclude?.children.get(pe), strip?.children.get(pe), false);
      if (child) children.push([pe, child]);
    }
    if (children.length > 1) children.sort((a, b) => comparePathElements(a[0], b[0]));
    const member = l === undefined && !root && !strip?.member;
    if (children.length === 0) return member ? {} : undefined;
    const out: JsonObject = member ? { '.': {} } : {};
    for (const [pe, child] of children) out[pe] = child;
    return out;
  }
  return changed(l, r) && !root && !strip?.member ? {} : undefined;
}

/**
 * Sorts an object's keys in place. Objects have a handful of keys; insertion sort orders them
 * without the work arrays Array.prototype.sort allocates on every call (6% of a create's garbage).
 */
function sortNames(keys: string[]): void {
  if (keys.length > 32) {
    keys.sort(compareStrings);
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[j]! > k; j--) keys[j + 1] = keys[j]!;
    keys[j + 1] = k;
  }
}

/** Whether `leaf` records a path as added or modified (removals never make a create's fields). */
function changed(l: unknown, r: unknown): boolean {
  return l === undefined || (r !== undefined && !deepEqual(l, r));
}
