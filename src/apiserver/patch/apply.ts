// Server-side apply (application/apply-patch+yaml). The applied configuration is the manager's
// whole intent: it is merged into the live object, the manager then owns exactly the fields it
// sent, fields it owned before and no longer sends are removed unless someone else owns them, and
// changing a value another manager owns is a conflict unless the request forces it.
import { StatusError, badRequest, field, invalid } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import type { MergeKind } from '../../api/schema/merge-schema.js';
import { apiVersionOf } from '../../api/types.js';
import { FieldSet, pathString, type Path } from './fieldpath.js';
import { STRIPPED_FIELDS, compare, listElement, toFieldSet } from './fieldset.js';
import { clone, deepEqual, isObject, isUnsafeKey, own, pruneNulls, goEncoderJson, type JsonObject } from './json.js';
import {
  capUpdateManagers,
  decodeOrEmpty,
  fieldFilter,
  filterComparison,
  filterSet,
  managerId,
  setManagedFields,
  toManagedTime,
  withoutManagedFields,
  type Manager,
  type Managers,
} from './managedfields.js';
import { asList, childSchema, isAtomicMap, schemaFor, type ListSchema, type Schema } from '../../api/schema/merge-schema.js';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** kubectl's server-side apply manager; upstream gives it the client-side-apply upgrade path. */
const KUBECTL_MANAGER = 'kubectl';

export interface ApplyOptions {
  manager: string;
  force: boolean;
  gvk: MergeKind;
  now: string;
  subresource?: string;
}

export interface ApplyResult {
  object: KubeObject;
  /** False when the result equals `live` exactly (managedFields included): nothing to store. */
  changed: boolean;
}

interface Conflict {
  id: string;
  manager: Manager;
  path: Path;
}

/**
 * Applies `applied` on top of `live` (undefined: the object doesn't exist yet and is created).
 * Throws 409 Conflict with FieldManagerConflict causes, or 400 for a malformed configuration.
 */
export function applyServerSide(live: KubeObject | undefined, applied: KubeObject, opts: ApplyOptions): ApplyResult {
  validateApplied(applied, opts);
  const schema = schemaFor(opts.gvk);
  const filter = fieldFilter(opts.gvk, opts.subresource);
  const config = applied as unknown as JsonObject;

  const managers = decodeOrEmpty(live?.metadata.managedFields);
  const liveBase: JsonObject = withoutManagedFields(live) ?? {};
  const applier: Manager = { manager: opts.manager, operation: 'Apply', apiVersion: String(applied.apiVersion), set: new FieldSet() };
  if (opts.subresource) applier.subresource = opts.subresource;
  const applierId = managerId(applier);
  const previous = managers.get(applierId);

  const merged = mergeValue(liveBase, config, schema) as JsonObject;
  applier.set = filterSet(toFieldSet(config, schema), filter);
  if (previous?.time) applier.time = previous.time;
  managers.set(applierId, applier);
  const pruned = prune(merged, managers, previous?.set, schema);

  const diff = filterComparison(compare(liveBase, pruned, schema, filter.exclude), filter);
  const changed = diff.modified.union(diff.added);
  let conflicts = findConflicts(managers, applierId, changed);
  let force = opts.force;
  if (conflicts.length > 0 && !force) {
    conflicts = conflictsNotExplainedByLastApplied(conflicts, liveBase, opts.manager, schema);
    if (conflicts.length > 0) throw conflictError(conflicts);
    force = true;
  }
  for (const [id, m] of managers) {
    if (id === applierId) continue;
    if (force) m.set = m.set.difference(changed);
    m.set = m.set.difference(diff.removed);
  }
  for (const [id, m] of managers) {
    m.set = m.set.difference(STRIPPED_FIELDS);
    if (m.set.isEmpty()) managers.delete(id);
  }
  if (!deepEqual(pruned, liveBase)) applier.time = toManagedTime(opts.now);
  capUpdateManagers(managers);

  const object = pruned as KubeObject;
  if (!isObject(object.metadata)) object.metadata = {};
  setManagedFields(object, managers);
  if (opts.manager === KUBECTL_MANAGER) syncLastApplied(object, applied);
  return { object, changed: !deepEqual(object, live) };
}

function validateApplied(applied: KubeObject, opts: ApplyOptions): void {
  if (!opts.manager) {
    throw invalid('PatchOptions', 'meta.k8s.io', '', [field.required('fieldManager', 'is required for apply requests')]);
  }
  if (!isObject(applied)) throw badRequest('error decoding YAML: the applied configuration must be an object');
  const meta: unknown = applied.metadata;
  if (meta !== undefined && meta !== null && !isObject(meta)) throw badRequest('metadata must be an object');
  if (isObject(meta) && meta.managedFields !== undefined && meta.managedFields !== null) {
    throw badRequest('metadata.managedFields must be nil');
  }
  const expected = apiVersionOf(opts.gvk.group, opts.gvk.version);
  if (applied.apiVersion !== expected) {
    throw badRequest(`Incorrect version specified in apply patch. Specified patch version: ${String(applied.apiVersion ?? '')}, expected: ${expected}`);
  }
  if (applied.kind !== opts.gvk.kind) {
    throw badRequest(`no corresponding type for ${expected.includes('/') ? expected : `/${expected}`}, Kind=${String(applied.kind ?? '')}`);
  }
}

// ---- merging the configuration into the live object ---------------------------------------

/** Merges like structured-merge-diff: config wins per leaf, keyed lists merge per element. */
function mergeValue(live: unknown, config: unknown, s: Schema | undefined): unknown {
  if (config === undefined) return clone(live);
  // An explicit null clears the field; the applier still owns it.
  if (config === null) return undefined;
  if (isObject(config)) {
    if (!isObject(live) || isAtomicMap(s)) return pruneNulls(config);
    // Live key order first, then new keys in the configuration's order.
    const out: JsonObject = {};
    for (const k of new Set([...Object.keys(live), ...Object.keys(config)])) {
      if (isUnsafeKey(k)) continue;
      const m = Object.prototype.hasOwnProperty.call(config, k) ? mergeValue(own(live, k), config[k], childSchema(s, k)) : clone(live[k]);
      if (m !== undefined) out[k] = m;
    }
    return out;
  }
  if (Array.isArray(config)) {
    const ls = asList(s);
    if (!ls || ls.listType === 'atomic' || !Array.isArray(live)) return pruneNulls(config);
    return mergeList(live, config, ls);
  }
  return config;
}

/**
 * Keyed-list merge. Result order follows the configuration for the elements it names, with the
 * live-only elements kept where they were relative to those.
 */
function mergeList(live: unknown[], config: unknown[], ls: ListSchema): unknown[] {
  const path: Path = [];
  const keyed = (list: unknown[], strict: boolean) => {
    const order: string[] = [];
    const items = new Map<string, unknown>();
    list.forEach((item, i) => {
      let pe: string;
      try {
        pe = listElement(ls, item, path, i);
      } catch (e) {
        if (strict) throw e;
        pe = `i:${i}`;
      }
      if (items.has(pe)) return;
      items.set(pe, item);
      order.push(pe);
    });
    return { order, items };
  };
  const l = keyed(live, false);
  const r = keyed(config, true);
  const mergeItem = (pe: string) => {
    if (ls.listType === 'set') return r.items.has(pe) ? r.items.get(pe) : l.items.get(pe);
    return mergeValue(l.items.get(pe), r.items.get(pe), ls.items);
  };
  const shared = r.order.filter((pe) => l.items.has(pe));
  const out: unknown[] = [];
  const done = new Set<string>();
  let next = 0;
  let li = 0;
  let ri = 0;
  while (li < l.order.length || ri < r.order.length) {
    if (li < l.order.length && done.has(l.order[li]!)) {
      li++;
      continue;
    }
    if (li < l.order.length && ri < r.order.length) {
      const pe = l.order[li]!;
      if (pe === r.order[ri]) {
        out.push(mergeItem(pe));
        done.add(pe);
        li++;
        ri++;
        next = shared.indexOf(pe) + 1;
        continue;
      }
      // A shared element that the configuration places later: wait for it on the config side.
      if (r.items.has(pe) && next < shared.length && shared[next] !== pe) {
        li++;
        continue;
      }
    }
    if (li < l.order.length && !r.items.has(l.order[li]!)) {
      out.push(l.items.get(l.order[li]!));
      li++;
      continue;
    }
    if (ri < r.order.length) {
      const pe = r.order[ri]!;
      if (!done.has(pe)) {
        out.push(mergeItem(pe));
        done.add(pe);
        if (shared[next] === pe) next++;
      }
      ri++;
      continue;
    }
    // Only live elements the configuration already placed remain.
    li++;
  }
  return out.filter((v) => v !== undefined);
}

// ---- removing what the applier stopped sending ---------------------------------------------

/**
 * Removes fields the applier owned last time and no longer sends, unless another manager (or the
 * new configuration) still owns them or something beneath them. Like upstream, a struct field the
 * applier owned through its children goes away whole once nobody owns anything in it.
 */
function prune(merged: JsonObject, managers: Managers, last: FieldSet | undefined, schema: Schema | undefined): JsonObject {
  if (!last || last.isEmpty()) return merged;
  let owned = new FieldSet();
  for (const m of managers.values()) owned = owned.union(m.set);
  const covered = (path: Path) => {
    for (let i = 1; i < path.length; i++) if (owned.has(path.slice(0, i))) return true;
    const n = owned.node(path);
    return n !== undefined && !n.isEmpty();
  };
  const walk = (node: FieldSet, prefix: Path) => {
    for (const [pe, child] of node.children) {
      const path = [...prefix, pe];
      const removable = prefix.length > 0 && (child.member || pe.startsWith('f:')) && !STRIPPED_FIELDS.has(path);
      if (removable && !covered(path)) removePath(merged, path, schema);
      else walk(child, path);
    }
  };
  walk(last, []);
  return merged;
}

/** Deletes the value at `path`, and any map or list that only held it (below the top level). */
function removePath(root: JsonObject, path: Path, schema: Schema | undefined): void {
  const go = (container: unknown, s: Schema | undefined, i: number): boolean => {
    const pe = path[i]!;
    const last = i === path.length - 1;
    if (isObject(container) && pe.startsWith('f:')) {
      const k = pe.slice(2);
      if (!Object.prototype.hasOwnProperty.call(container, k)) return false;
      if (last || go(container[k], childSchema(s, k), i + 1)) {
        delete container[k];
        return i > 0 && Object.keys(container).length === 0;
      }
      return false;
    }
    if (Array.isArray(container)) {
      const ls = asList(s);
      const at = container.findIndex((item, n) => elementOf(ls, item, n) === pe);
      if (at < 0) return false;
      if (last || go(container[at], ls?.items, i + 1)) {
        container.splice(at, 1);
        return container.length === 0;
      }
      return false;
    }
    return false;
  };
  go(root, schema, 0);
}

function elementOf(ls: ListSchema | undefined, item: unknown, index: number): string {
  if (!ls || ls.listType === 'atomic') return `i:${index}`;
  try {
    return listElement(ls, item, [], index);
  } catch {
    return `i:${index}`;
  }
}

// ---- conflicts ------------------------------------------------------------------------------

function findConflicts(managers: Managers, applierId: string, changed: FieldSet): Conflict[] {
  const out: Conflict[] = [];
  const ids = [...managers.keys()].filter((id) => id !== applierId).sort();
  for (const id of ids) {
    const m = managers.get(id)!;
    for (const path of m.set.intersection(changed).paths()) out.push({ id, manager: m, path });
  }
  return out;
}

/**
 * kubectl's server-side apply may take over fields that client-side apply recorded in the
 * last-applied annotation: that is how objects move from `apply` to `apply --server-side`.
 */
function conflictsNotExplainedByLastApplied(conflicts: Conflict[], live: JsonObject, manager: string, schema: Schema | undefined): Conflict[] {
  if (manager !== KUBECTL_MANAGER) return conflicts;
  const annotations = isObject(live.metadata) ? live.metadata.annotations : undefined;
  const text = isObject(annotations) ? annotations[LAST_APPLIED_ANNOTATION] : undefined;
  if (typeof text !== 'string' || text === '') return conflicts;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return conflicts;
  }
  let allowed: FieldSet;
  try {
    allowed = toFieldSet(lastApplied, schema).intersection(toFieldSet(live, schema));
  } catch {
    return conflicts;
  }
  return conflicts.filter((c) => !allowed.has(c.path));
}

function printManager(m: Manager): string {
  let s = JSON.stringify(m.manager);
  if (m.subresource) s += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') s += ` using ${m.apiVersion ?? ''}`;
  return s;
}

function conflictError(conflicts: Conflict[]): StatusError {
  const causes = conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with ${printManager(c.manager)}`, field: pathString(c.path) }));
  let message: string;
  if (conflicts.length === 1) {
    const c = conflicts[0]!;
    message = `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  } else {
    const lines: string[] = [];
    let current: string | undefined;
    for (const c of conflicts) {
      if (c.id !== current) {
        lines.push(`conflicts with ${printManager(c.manager)}:`);
        current = c.id;
      }
      lines.push(`- ${pathString(c.path)}`);
    }
    message = `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
  }
  return new StatusError(409, 'Conflict', message, { causes });
}

/** Keeps client-side apply's annotation in step when kubectl applies server-side. */
function syncLastApplied(object: KubeObject, applied: KubeObject): void {
  const annotations = object.metadata.annotations;
  if (!annotations || typeof annotations[LAST_APPLIED_ANNOTATION] !== 'string') return;
  const config = clone(applied);
  if (isObject(config.metadata) && isObject(config.metadata.annotations)) delete config.metadata.annotations[LAST_APPLIED_ANNOTATION];
  annotations[LAST_APPLIED_ANNOTATION] = goEncoderJson(config);
}
