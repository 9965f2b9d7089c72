// The OpenAPI definitions of the built-in kinds, read off their messages (src/api/schema), named
// as upstream names them (io.k8s.api.core.v1.Pod) and carrying upstream's extensions: the kind a
// definition is (x-kubernetes-group-version-kind) and how it merges (x-kubernetes-patch-*,
// x-kubernetes-list-*, x-kubernetes-map-type). kubectl explains kinds from them and computes
// client-side apply patches with their patch extensions.
import protobuf from 'protobufjs';
import type { Field, Type } from 'protobufjs';
import { SUPPORTED_KINDS } from '../../api/schema/messages.js';
import { DURATION, EXTRA_VALUE, FIELDS_V1, INT_OR_STRING, JSON_SCHEMA_PROPS, MICRO_TIME, QUANTITY, RAW_EXTENSION, TIME, messageFor, protobufSchema } from '../../api/schema/root.js';

/** A schema object of either document; `$ref`s name definitions by `#/<prefix>/<name>`. */
export type OpenApiSchema = Record<string, unknown>;

/** Where references point: '#/definitions/' in v2, '#/components/schemas/' in v3. */
export type RefPrefix = '#/definitions/' | '#/components/schemas/';

/** Definitions by name, and the one a resource's kind is. */
export interface KindDefinitions {
  root: string;
  schemas: Map<string, OpenApiSchema>;
}

/** Messages whose JSON is not their fields, with the schema upstream publishes for them. */
const OPAQUE: Record<string, OpenApiSchema> = {
  [TIME]: { type: 'string', format: 'date-time' },
  [MICRO_TIME]: { type: 'string', format: 'date-time' },
  [DURATION]: { type: 'string' },
  [FIELDS_V1]: { type: 'object' },
  [QUANTITY]: { type: 'string' },
  [INT_OR_STRING]: { type: 'string', format: 'int-or-string' },
  [RAW_EXTENSION]: { type: 'object' },
  [JSON_SCHEMA_PROPS]: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  [EXTRA_VALUE]: { type: 'array', items: { type: 'string', default: '' } },
};

const SCALARS: Record<string, OpenApiSchema> = {
  string: { type: 'string' },
  bool: { type: 'boolean' },
  int32: { type: 'integer', format: 'int32' },
  int64: { type: 'integer', format: 'int64' },
  uint32: { type: 'integer', format: 'int32' },
  uint64: { type: 'integer', format: 'int64' },
  double: { type: 'number', format: 'double' },
  float: { type: 'number', format: 'double' },
  bytes: { type: 'string', format: 'byte' },
};

/** Upstream's definition name: the Go package path reversed at its domain, then the type. */
export function definitionName(type: Type): string {
  return type.fullName.replace(/^\.k8s\.io\./, 'io.k8s.').replace('apiextensions_apiserver', 'apiextensions-apiserver').replace('kube_aggregator', 'kube-aggregator');
}

function option(holder: { options?: Record<string, unknown> | undefined }, name: string): unknown {
  return holder.options?.[`(${name})`];
}

/** The group, version and kind a message is, when it is a kind's. */
function kindOf(type: Type): { group: string; version: string; kind: string } | undefined {
  const pkg = type.parent?.fullName.replace(/^\./, '');
  for (const [apiVersion, entry] of Object.entries(SUPPORTED_KINDS)) {
    if (entry.pkg !== pkg || !entry.kinds.includes(type.name)) continue;
    const slash = apiVersion.indexOf('/');
    return { group: slash < 0 ? '' : apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1), kind: type.name };
  }
  return undefined;
}

class Builder {
  readonly schemas = new Map<string, OpenApiSchema>();

  constructor(private readonly prefix: RefPrefix) {}

  /** Adds a message's definition and those it refers to; returns its name. */
  define(type: Type): string {
    const name = definitionName(type);
    if (this.schemas.has(name)) return name;
    const opaque = OPAQUE[type.fullName];
    if (opaque) {
      this.schemas.set(name, { ...opaque });
      return name;
    }
    const properties: Record<string, OpenApiSchema> = {};
    const schema: OpenApiSchema = { type: 'object', properties };
    // Before the fields, so a message that holds itself refers to this same definition.
    this.schemas.set(name, schema);
    const gvk = kindOf(type);
    if (gvk) {
      properties['apiVersion'] = { type: 'string' };
      properties['kind'] = { type: 'string' };
      schema['x-kubernetes-group-version-kind'] = [gvk];
    }
    if (option(type, 'structType') === 'atomic') schema['x-kubernetes-map-type'] = 'atomic';
    this.addFields(type, properties);
    return name;
  }

  private addFields(type: Type, properties: Record<string, OpenApiSchema>): void {
    for (const f of type.fieldsArray) {
      if (option(f, 'inline') === true && f.resolvedType instanceof protobuf.Type) this.addFields(f.resolvedType, properties);
      else properties[f.name] = this.field(f);
    }
  }

  private ref(type: Type): OpenApiSchema {
    return { $ref: `${this.prefix}${this.define(type)}` };
  }

  private value(f: Field): OpenApiSchema {
    if (f.resolvedType instanceof protobuf.Type) return this.ref(f.resolvedType);
    if (f.resolvedType instanceof protobuf.Enum) return { type: 'string' };
    return { ...(SCALARS[f.type] ?? { type: 'string' }) };
  }

  private field(f: Field): OpenApiSchema {
    if (f.map) {
      const s: OpenApiSchema = { type: 'object', additionalProperties: this.value(f) };
      if (option(f, 'mapType') === 'atomic') s['x-kubernetes-map-type'] = 'atomic';
      return s;
    }
    if (f.repeated) {
      const s: OpenApiSchema = { type: 'array', items: this.value(f) };
      const strategy = option(f, 'patchStrategy');
      const key = option(f, 'patchMergeKey');
      const listType = option(f, 'listType');
      const keys = option(f, 'listMapKeys');
      if (typeof strategy === 'string') s['x-kubernetes-patch-strategy'] = strategy;
      if (typeof key === 'string') s['x-kubernetes-patch-merge-key'] = key;
      if (typeof listType === 'string') s['x-kubernetes-list-type'] = listType;
      if (typeof keys === 'string') s['x-kubernetes-list-map-keys'] = keys.split(',');
      return s;
    }
    const v = this.value(f);
    const d = option(f, 'default');
    if (d !== undefined) v['default'] = d;
    // OpenAPI 3.0 ignores the siblings of a $ref: upstream wraps references in allOf.
    if (this.prefix === '#/components/schemas/' && '$ref' in v) return { allOf: [v] };
    return v;
  }
}

const cache = new Map<string, KindDefinitions>();

/** The definitions a built-in kind's document holds, or undefined when no message describes it. */
export function builtinKindDefinitions(apiVersion: string, kind: string, prefix: RefPrefix): KindDefinitions | undefined {
  const key = `${prefix}${apiVersion}/${kind}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const type = messageFor(apiVersion, kind);
  if (!type) return undefined;
  const b = new Builder(prefix);
  const defs = { root: b.define(type), schemas: b.schemas };
  cache.set(key, defs);
  return defs;
}

/** ObjectMeta's definitions, which custom resources' documents refer to. */
export function objectMetaDefinitions(prefix: RefPrefix): KindDefinitions {
  const b = new Builder(prefix);
  const meta = protobufSchema().lookupType('.k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  return { root: b.define(meta), schemas: b.schemas };
}

/** Upstream's definition name of a custom kind: the group reversed, then version and kind (com.example.stable.v1.CronTab). */
export function customDefinitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

/** The definitions of a custom resource: its schema, with the TypeMeta and ObjectMeta every object has. */
export function customKindDefinitions(gvk: { group: string; version: string; kind: string }, schema: OpenApiSchema, prefix: RefPrefix): KindDefinitions {
  const meta = objectMetaDefinitions(prefix);
  const root = customDefinitionName(gvk.group, gvk.version, gvk.kind);
  const metaRef = { $ref: `${prefix}${meta.root}` };
  const properties = { ...((schema['properties'] as Record<string, OpenApiSchema> | undefined) ?? {}) };
  // What the CRD says of these (descriptions) stays; their types are every object's.
  const described = (key: string): OpenApiSchema => {
    const d = properties[key]?.['description'];
    return typeof d === 'string' ? { description: d } : {};
  };
  properties['apiVersion'] = { ...described('apiVersion'), type: 'string' };
  properties['kind'] = { ...described('kind'), type: 'string' };
  properties['metadata'] = prefix === '#/components/schemas/' ? { ...described('metadata'), allOf: [metaRef] } : { ...described('metadata'), ...metaRef };
  const schemas = new Map(meta.schemas);
  schemas.set(root, { ...schema, type: 'object', properties, 'x-kubernetes-group-version-kind': [gvk] });
  return { root, schemas };
}
