// How objects merge, read off the kinds' messages (src/api/schema/messages.ts): the
// patchStrategy/patchMergeKey, listType/listMapKeys, mapType and structType options there are
// upstream's markers on the Go types. Where a message says nothing the defaults hold:
//   - maps merge key by key (strategic merge) and are owned field by field (apply);
//   - lists are replaced whole (strategic merge) and owned as one value (apply).
// Strategic merge and server-side apply read the same tree but not always the same keys: container
// ports merge by containerPort in a strategic patch, yet apply keys them by (containerPort, protocol).
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import type { GroupVersionKind } from '../types.js';
import { OPAQUE_MESSAGES, messageFor } from './root.js';

/** A kind as merging needs it: built-in kinds are described by their messages, custom kinds carry their own schema. */
export interface SchemaKind extends Pick<GroupVersionKind, 'group' | 'version' | 'kind'> {
  mergeSchema?: StructSchema;
}

/** A kind and its subresources (a ResourceType is one): field ownership depends on whether status is one. */
export interface MergeKind extends SchemaKind {
  subresources: readonly string[];
}

export type Schema = StructSchema | MapSchema | ListSchema | AtomicSchema;

export interface StructSchema {
  type: 'struct';
  fields: Record<string, Schema>;
  /** A non-pointer struct in Go: a typed object always carries it, even as `{}`. */
  alwaysPresent?: boolean;
}

/** A free-form string-keyed map (labels, data, capacity). */
export interface MapSchema {
  type: 'map';
  values?: Schema;
  /** `+mapType=atomic`: replaced and owned as one value. */
  atomic?: boolean;
}

export interface ListSchema {
  type: 'list';
  /** Strategic merge: merge elements, or replace the whole list (the default). */
  strategy: 'merge' | 'replace';
  /** Strategic merge key for lists of objects. */
  mergeKey?: string;
  /** Server-side apply: atomic (one value), set (of scalars) or map (keyed objects). */
  listType: 'atomic' | 'set' | 'map';
  /** Server-side apply keys for listType=map. */
  keys?: string[];
  /** Values the apply keys take when an element omits them (upstream's `+default`). */
  keyDefaults?: Record<string, unknown>;
  items?: Schema;
  /** Declared without omitempty in Go: a typed object carries it, as null when empty. */
  alwaysPresent?: boolean;
}

/** `+structType=atomic`: a struct replaced and owned as one value. */
export interface AtomicSchema {
  type: 'atomic';
}

const ATOMIC: AtomicSchema = { type: 'atomic' };

const structs = new Map<Type, StructSchema>();

function option(holder: { options?: Record<string, unknown> | undefined }, name: string): unknown {
  return holder.options?.[`(${name})`];
}

function messageSchema(type: Type): Schema | undefined {
  if (OPAQUE_MESSAGES.has(type.fullName)) return undefined;
  return option(type, 'structType') === 'atomic' ? ATOMIC : structSchema(type);
}

/** A message's fields; also for an atomic struct embedded inline, whose fields are its parent's. */
function structSchema(type: Type): StructSchema {
  const cached = structs.get(type);
  if (cached) return cached;
  const fields: Record<string, Schema> = {};
  const schema: StructSchema = { type: 'struct', fields };
  // Before the fields, so a message that holds itself refers to this same node.
  structs.set(type, schema);
  for (const f of type.fieldsArray) {
    // An embedded struct (json:",inline") adds its fields to the parent's.
    if (option(f, 'inline') === true && f.resolvedType instanceof protobuf.Type) Object.assign(fields, structSchema(f.resolvedType).fields);
    else {
      const sub = fieldSchema(f);
      if (sub) fields[f.name] = sub;
    }
  }
  return schema;
}

function fieldSchema(f: Field): Schema | undefined {
  const resolved = f.resolvedType instanceof protobuf.Type ? f.resolvedType : undefined;
  const inner = resolved ? messageSchema(resolved) : undefined;
  if (f.map) {
    const m: MapSchema = { type: 'map' };
    if (option(f, 'mapType') === 'atomic') m.atomic = true;
    if (inner) m.values = inner;
    return m;
  }
  if (f.repeated) return listSchema(f, resolved, inner);
  // A Go struct that is not a pointer is always serialized, as {} when empty.
  if (inner?.type === 'struct' && option(f, 'ptr') !== true) return { ...inner, alwaysPresent: true };
  return inner;
}

function listSchema(f: Field, item: Type | undefined, inner: Schema | undefined): ListSchema {
  const merge = option(f, 'patchStrategy') === 'merge';
  const mergeKey = option(f, 'patchMergeKey');
  const declared = option(f, 'listType');
  const listType = declared === 'set' || declared === 'map' ? declared : merge && !item ? 'set' : 'atomic';
  const l: ListSchema = { type: 'list', strategy: merge ? 'merge' : 'replace', listType };
  if (typeof mergeKey === 'string') l.mergeKey = mergeKey;
  if (listType === 'map') {
    const keys = String(option(f, 'listMapKeys') ?? mergeKey ?? '').split(',').filter(Boolean);
    l.keys = keys;
    const defaults: Record<string, unknown> = {};
    for (const k of keys) {
      const d = item?.fields[k] ? option(item.fields[k], 'default') : undefined;
      if (d !== undefined) defaults[k] = d;
    }
    if (Object.keys(defaults).length) l.keyDefaults = defaults;
  }
  if (inner) l.items = inner;
  if (option(f, 'keep') === true) l.alwaysPresent = true;
  return l;
}

let metadataSchema: Schema | undefined;

/** How ObjectMeta merges: the same in every kind, custom ones included. */
export function objectMetaMergeSchema(): Schema {
  metadataSchema ??= fieldSchema(messageFor('v1', 'Pod')!.fields['metadata']!)!;
  return metadataSchema;
}

/** Kinds nothing describes merge by the defaults, their ObjectMeta by its rules. */
let otherKind: StructSchema | undefined;

/** Root schema for a kind: from its messages, or its own (custom resources); else only the ObjectMeta rules. */
export function schemaFor(gvk: SchemaKind): StructSchema {
  const type = messageFor(gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version, gvk.kind);
  const s = type ? messageSchema(type) : gvk.mergeSchema;
  if (s?.type === 'struct') return s;
  otherKind ??= { type: 'struct', fields: { metadata: objectMetaMergeSchema() } };
  return otherKind;
}

/** The schema of `key` inside a value described by `s` (undefined: no rule, use the defaults). */
export function childSchema(s: Schema | undefined, key: string): Schema | undefined {
  if (!s) return undefined;
  if (s.type === 'struct') return Object.prototype.hasOwnProperty.call(s.fields, key) ? s.fields[key] : undefined;
  if (s.type === 'map') return s.values;
  return undefined;
}

export function itemSchema(s: Schema | undefined): Schema | undefined {
  return s?.type === 'list' ? s.items : undefined;
}

export function asList(s: Schema | undefined): ListSchema | undefined {
  return s?.type === 'list' ? s : undefined;
}

/** Whether a map value is one opaque unit (atomic struct or atomic map). */
export function isAtomicMap(s: Schema | undefined): boolean {
  return s?.type === 'atomic' || (s?.type === 'map' && s.atomic === true);
}

/** Whether the entries of a map are arbitrary keys rather than declared fields. */
export function isFreeFormMap(s: Schema | undefined): boolean {
  return s?.type === 'map';
}
