// One copy of each FieldsV1 tree. Every pod of a ReplicaSet records the same fields for the same
// managers, and a tree is a hundred small objects: kept per pod they were about 12 KB of every
// cached pod (a third of the server's heap at 5,000 pods). Interned bottom-up, identical subtrees
// are one frozen object shared by every object that records them; a tree no object holds any
// more is collected, and its table entry with it.
import type { JsonObject } from '../../api/kinds/json.js';

/** Canonical trees by structure: each child named by the id of its own canonical tree. */
const table = new Map<string, WeakRef<JsonObject>>();
const ids = new WeakMap<JsonObject, number>();
const forget = new FinalizationRegistry<string>((key) => {
  if (table.get(key)?.deref() === undefined) table.delete(key);
});
let nextId = 1;

/**
 * The canonical copy of `tree` (a FieldsV1 document: objects of objects). Never change what this
 * returns: it is frozen and shared. A value that is not an object of objects is returned as is.
 */
export function internFieldsV1(tree: JsonObject): JsonObject {
  if (ids.has(tree)) return tree;
  const keys = Object.keys(tree);
  const children = new Array<JsonObject>(keys.length);
  // Joined, not appended: a key built with += is a chain of small strings (about 30 a tree), and
  // the table holds one per tree for as long as the tree lives.
  const parts = new Array<string>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = tree[keys[i]!];
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return tree;
    const child = internFieldsV1(v as JsonObject);
    const id = ids.get(child);
    if (id === undefined) return tree;
    children[i] = child;
    parts[i] = `${keys[i]!}\u0000${id}\u0001`;
  }
  const key = parts.join('');
  const hit = table.get(key)?.deref();
  if (hit) return hit;
  // Built only when new: nearly every tree is one seen before, and an object keyed by field
  // paths is a costly thing to make and throw away.
  const out: JsonObject = {};
  for (let i = 0; i < keys.length; i++) out[keys[i]!] = children[i]!;
  Object.freeze(out);
  ids.set(out, nextId++);
  table.set(key, new WeakRef(out));
  forget.register(out, key);
  return out;
}

/** Whether `tree` is a canonical copy (what internFieldsV1 returns for an object of objects). */
export function isInterned(tree: JsonObject): boolean {
  return ids.has(tree);
}

/** Replaces each managedFields entry's tree in `managedFields` (as stored or sent) with its canonical copy. */
export function internManagedFields(managedFields: unknown): void {
  if (!Array.isArray(managedFields)) return;
  for (const e of managedFields as { fieldsV1?: unknown }[]) {
    const f = e?.fieldsV1;
    if (f !== null && typeof f === 'object' && !Array.isArray(f)) e.fieldsV1 = internFieldsV1(f as JsonObject);
  }
}

/** How many distinct trees are held (for tests). */
export function internedTrees(): number {
  return table.size;
}
