// metadata.managedFields: who set which field, as kube-apiserver records it. Every write names a
// manager; the fields a write changes move to that manager's entry and out of everyone else's.
// Entries are keyed by (manager, operation, subresource), plus apiVersion for Update entries, as
// upstream keys them, so a manager that keeps writing keeps one entry.
import type { KubeObject, ManagedFieldsEntry } from '../../api/types.js';
import { apiVersionOf } from '../../api/types.js';
import { FieldSet, fieldElement } from './fieldpath.js';
import { STRIPPED_FIELDS, compare, createdFieldsV1, type Comparison } from './fieldset.js';
import { isObject, type JsonObject } from './json.js';
import { jsonEqual } from '../../api/kinds/json.js';
import { rfc3339 } from '../../util/time.js';
import { schemaFor, type MergeKind } from '../../api/schema/merge-schema.js';
import { hasStatusSubresource } from '../../api/resource.js';
import { internFieldsV1, isInterned } from './fields-intern.js';

export interface Manager {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  subresource?: string;
  set: FieldSet;
  /** The stored entry's fields, reused as long as `set` is still the set decoded from them (encoding is most of a write's field-management cost). */
  encoded?: { set: FieldSet; fieldsV1: JsonObject };
}

/** Managers by identity; see managerId. */
export type Managers = Map<string, Manager>;

/** Upstream caps Update entries; the oldest merge into one bucket per apiVersion. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/**
 * A manager's identity, spelled as upstream spells it: the entry's JSON without time and fields,
 * and without apiVersion for appliers (so re-applying at another version keeps one entry).
 */
export function managerId(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  const id: JsonObject = {};
  if (m.manager) id.manager = m.manager;
  id.operation = m.operation;
  if (m.operation === 'Update' && m.apiVersion) id.apiVersion = m.apiVersion;
  if (m.subresource) id.subresource = m.subresource;
  return JSON.stringify(id);
}

/**
 * Decodes metadata.managedFields; throws on an entry upstream would refuse to decode. `stored`:
 * the entries are a stored object's, encoded here before, so an entry nobody changes is written
 * back as it was rather than encoded again.
 */
export function decodeManagedFields(raw: unknown, stored = false): Managers {
  const out: Managers = new Map();
  if (raw === undefined || raw === null) return out;
  if (!Array.isArray(raw)) throw new Error('managedFields must be a list');
  for (const e of raw) {
    if (!isObject(e)) throw new Error('managedFields entry must be an object');
    const { manager, operation, apiVersion, time, fieldsType, fieldsV1, subresource } = e;
    if (operation !== 'Apply' && operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${String(fieldsType)}`);
    for (const v of [manager, apiVersion, time, subresource]) if (v !== undefined && typeof v !== 'string') throw new Error('invalid managedFields entry');
    const m: Manager = { manager: (manager as string | undefined) ?? '', operation, set: decodeFields(fieldsV1 ?? {}) };
    if (stored && isObject(fieldsV1)) m.encoded = { set: m.set, fieldsV1 };
    if (apiVersion) m.apiVersion = apiVersion as string;
    if (time) m.time = time as string;
    if (subresource) m.subresource = subresource as string;
    const id = managerId(m);
    const prior = out.get(id);
    if (prior) m.set = prior.set.union(m.set);
    out.set(id, m);
  }
  return out;
}

/**
 * Sets decoded from canonical subtrees, shared: every pod of a ReplicaSet carries the same trees,
 * and decoding them was most of what a write spent reading managedFields. Kept per subtree rather
 * than per whole tree: a node's status entry names the pod's own IP, so each pod's tree is unique
 * at the top, and a set per whole tree kept a decoded copy of everything beneath it for every pod
 * (about 10 KB a pod, a quarter of the server's heap at 10,000 pods). Held as long as the subtree.
 */
const decoded = new WeakMap<JsonObject, FieldSet>();

function decodeFields(fieldsV1: unknown): FieldSet {
  return FieldSet.fromFieldsV1(fieldsV1, isObject(fieldsV1) && isInterned(fieldsV1) ? decoded : undefined);
}

/** A stored object's managers (none if they cannot be decoded). */
export function decodeOrEmpty(raw: unknown): Managers {
  try {
    return decodeManagedFields(raw, true);
  } catch {
    return new Map();
  }
}

/** One manager's entry, its fields in the order upstream writes them. */
function entryOf(m: Manager): ManagedFieldsEntry {
  return entryWith(m, m.encoded?.set === m.set ? m.encoded.fieldsV1 : m.set.toFieldsV1());
}

function entryWith(m: Omit<Manager, 'set'>, fieldsV1: JsonObject): ManagedFieldsEntry {
  const e: ManagedFieldsEntry = m.manager ? { manager: m.manager, operation: m.operation } : { operation: m.operation };
  if (m.apiVersion) e.apiVersion = m.apiVersion;
  if (m.time) e.time = m.time;
  e.fieldsType = 'FieldsV1';
  e.fieldsV1 = internFieldsV1(fieldsV1);
  if (m.subresource) e.subresource = m.subresource;
  return e;
}

/** Entries in upstream's order: appliers first, then by time, manager, apiVersion, subresource. */
export function encodeManagedFields(managers: Managers): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const m of managers.values()) if (!m.set.isEmpty()) entries.push(entryOf(m));
  const seconds = (t: string | undefined) => (t ? Math.floor(Date.parse(t) / 1000) || 0 : 0);
  return entries.sort((p, q) => {
    if (p.operation !== q.operation) return p.operation! < q.operation! ? -1 : 1;
    const dt = seconds(p.time) - seconds(q.time);
    if (dt !== 0) return dt;
    for (const k of ['manager', 'apiVersion', 'subresource'] as const) {
      const a = p[k] ?? '';
      const b = q[k] ?? '';
      if (a !== b) return a < b ? -1 : 1;
    }
    return 0;
  });
}

export function setManagedFields(obj: KubeObject, managers: Managers): void {
  const entries = encodeManagedFields(managers);
  if (entries.length > 0) obj.metadata.managedFields = entries;
  else delete obj.metadata.managedFields;
}

/** Upstream records times as RFC 3339 with whole seconds. */
export function toManagedTime(now: string): string {
  const ms = Date.parse(now);
  return Number.isNaN(ms) ? now : rfc3339(ms);
}

/**
 * Which fields a write may touch, as the registry's reset-fields rules say: main-resource writes
 * never own status of kinds that have a status subresource, status writes never own spec, and a
 * scale write only moves spec.replicas.
 */
export interface FieldFilter {
  exclude?: FieldSet;
  only?: FieldSet;
}

// The filters are only read, never changed: built once.
const NO_FILTER: FieldFilter = {};
const WITHOUT_STATUS: FieldFilter = { exclude: FieldSet.fromPaths([[fieldElement('status')]]) };
const WITHOUT_SPEC: FieldFilter = { exclude: FieldSet.fromPaths([[fieldElement('spec')]]) };
const ONLY_REPLICAS: FieldFilter = { only: FieldSet.fromPaths([[fieldElement('spec'), fieldElement('replicas')]]) };

export function fieldFilter(kind: MergeKind, subresource: string | undefined): FieldFilter {
  if (subresource === undefined || subresource === '') return hasStatusSubresource(kind) ? WITHOUT_STATUS : NO_FILTER;
  if (subresource === 'status') return WITHOUT_SPEC;
  if (subresource === 'scale') return ONLY_REPLICAS;
  return NO_FILTER;
}

export function filterSet(set: FieldSet, f: FieldFilter): FieldSet {
  if (f.only) return set.onlySubtrees(f.only);
  if (f.exclude) return set.withoutSubtrees(f.exclude);
  return set;
}

export function filterComparison(c: Comparison, f: FieldFilter): Comparison {
  return { added: filterSet(c.added, f), modified: filterSet(c.modified, f), removed: filterSet(c.removed, f) };
}

export interface UpdateManagedFieldsOptions {
  manager: string;
  operation: 'Update';
  subresource?: string;
  now: string;
  /** The kind written, in the version its entries record. */
  kind: MergeKind;
  /**
   * The managedFields the client sent, when it sent any (read before validation, which then sees
   * the stored ones): valid ones replace the stored ones, [{}] clears them, anything else is
   * ignored, as upstream's field manager treats them.
   */
  requested?: unknown;
}

/**
 * Records a non-apply write (create, update, patch) of `old` into `updated` on
 * `updated.metadata.managedFields`. `old` is undefined for a create. Update never conflicts: it
 * takes the fields it changed from whoever owned them, appliers included.
 *
 * Call it on the object as it will be stored (after defaulting), as upstream does. On an object it
 * cannot make sense of, it drops managedFields rather than store garbage.
 */
export function updateManagedFields(old: KubeObject | undefined, updated: KubeObject, opts: UpdateManagedFieldsOptions): void {
  try {
    const gvk = opts.kind;
    const managers = baseManagers(old, 'requested' in opts ? opts.requested : updated.metadata.managedFields, opts.subresource);
    if (!old && !opts.subresource && managers.size === 0 && !forceGeneralPath) return recordCreate(updated, gvk, opts);
    const before = withoutManagedFields(old);
    const after = withoutManagedFields(updated);
    const filter = fieldFilter(gvk, opts.subresource);
    const diff = filterComparison(compare(before, after, schemaFor(gvk), filter.exclude), filter);
    const changed = diff.modified.union(diff.added);
    const taken = changed.difference(STRIPPED_FIELDS);
    const mine: Manager = { manager: opts.manager, operation: 'Update', apiVersion: apiVersionOf(opts.kind.group, opts.kind.version), time: toManagedTime(opts.now), set: taken };
    if (opts.subresource) mine.subresource = opts.subresource;
    const id = managerId(mine);
    const prior = managers.get(id);
    for (const [mid, m] of managers) {
      if (m.set.isEmpty()) {
        managers.delete(mid);
        continue;
      }
      // Most writers touch nobody else's fields: their sets (and encodings) stay as they are.
      if (!m.set.overlaps(changed) && !m.set.overlaps(diff.removed)) continue;
      m.set = m.set.difference(changed).difference(diff.removed);
      if (m.set.isEmpty()) managers.delete(mid);
    }
    if (!taken.isEmpty()) {
      if (prior) {
        // A writer that sets its own fields again (a node's status writes) ends with the set it had,
        // and keeps its encoding; a set holds no stripped field, so taking them back changes nothing.
        const priorSet = prior.encoded?.set;
        mine.set = priorSet && taken.isSubsetOf(priorSet) && !priorSet.overlaps(diff.removed) ? priorSet : prior.set.union(taken);
        if (prior.encoded?.set === mine.set) mine.encoded = prior.encoded;
      }
      managers.set(id, mine);
    }
    capUpdateManagers(managers);
    setManagedFields(updated, managers);
  } catch {
    delete updated.metadata.managedFields;
  }
}

/** For tests: take the general path for creates too, to check recordCreate against it. */
let forceGeneralPath = false;
export function useGeneralPathForCreates(on: boolean): void {
  forceGeneralPath = on;
}

/**
 * A create that brings no managedFields of its own, which is nearly every create: nobody owns
 * anything yet, so the writer's one entry is everything the object sets. The same result as the
 * general path, built in one walk of the object (createdFieldsV1).
 */
function recordCreate(created: KubeObject, gvk: MergeKind, opts: UpdateManagedFieldsOptions): void {
  const fieldsV1 = createdFieldsV1(withoutManagedFields(created)!, schemaFor(gvk), fieldFilter(gvk, undefined).exclude, STRIPPED_FIELDS);
  if (Object.keys(fieldsV1).length === 0) {
    delete created.metadata.managedFields;
    return;
  }
  created.metadata.managedFields = [entryWith({ manager: opts.manager, operation: 'Update', apiVersion: apiVersionOf(opts.kind.group, opts.kind.version), time: toManagedTime(opts.now) }, fieldsV1)];
}

/**
 * The managers a write starts from: those the request carries (so clients can edit or reset
 * managedFields), unless it carries none or writes a subresource, then those of the live object.
 * `[]` or `[{}]` resets.
 */
function baseManagers(old: KubeObject | undefined, requested: unknown, subresource: string | undefined): Managers {
  if (!subresource) {
    if (isManagedFieldsReset(requested)) return new Map();
    // The same list the object has (a client writing back what it read) decodes as the stored one.
    if (Array.isArray(requested) && requested.length > 0 && !jsonEqual(requested, old?.metadata.managedFields)) {
      try {
        const m = decodeManagedFields(requested);
        if (m.size > 0) return m;
      } catch {
        // fall back to the live object's, so a client that mangles managedFields can't wipe them
      }
    }
  }
  return decodeOrEmpty(old?.metadata.managedFields);
}

/** Upstream's documented reset: a list of one empty entry (an empty list changes nothing). */
export function isManagedFieldsReset(v: unknown): boolean {
  return Array.isArray(v) && v.length === 1 && isObject(v[0]) && Object.keys(v[0]).length === 0;
}

export function withoutManagedFields(obj: KubeObject | undefined): JsonObject | undefined {
  if (!obj) return undefined;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  void _dropped;
  return { ...obj, metadata };
}

/** Folds the oldest Update entries into per-apiVersion "ancient-changes" buckets. */
export function capUpdateManagers(managers: Managers): void {
  const updaters = [...managers.entries()].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const seconds = (m: Manager) => (m.time ? Math.floor(Date.parse(m.time) / 1000) || 0 : 0);
  updaters.sort(([ia, a], [ib, b]) => seconds(a) - seconds(b) || (ia < ib ? -1 : ia > ib ? 1 : 0));
  const firstByVersion = new Map<string, string>();
  let count = updaters.length;
  for (const [id, m] of updaters) {
    if (count <= MAX_UPDATE_MANAGERS) break;
    const version = m.apiVersion ?? '';
    const bucketId = managerId({ manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: version });
    const first = firstByVersion.get(version);
    if (first === undefined) {
      firstByVersion.set(version, id);
      continue;
    }
    let bucket = managers.get(bucketId);
    if (!bucket) {
      const firstEntry = managers.get(first)!;
      managers.delete(first);
      bucket = { ...firstEntry, manager: ANCIENT_CHANGES, operation: 'Update' };
      delete bucket.subresource;
      managers.set(bucketId, bucket);
    }
    bucket.set = m.set.union(bucket.set);
    if (m.time) bucket.time = m.time;
    else delete bucket.time;
    managers.delete(id);
    count--;
  }
}
