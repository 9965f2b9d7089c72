// The resource types a CustomResourceDefinition adds: one per served version, each a ResourceType
// like the built-in kinds', with its behaviour read off the CRD (schema, names, subresources,
// printer columns) instead of messages. With conversion None versions differ only in apiVersion;
// with Webhook the type carries the webhook, and the API server converts through it.
import type { ResourceType, TableColumn } from '../api/resource.js';
import type { KubeObject, StatusCause } from '../api/types.js';
import { unknownFields } from '../api/field-validation.js';
import { evaluateJsonPath } from '../api/json-path.js';
import { objectMetaFieldTree } from '../api/schema/known-fields.js';
import { objectMetaMergeSchema, type ListSchema, type Schema, type StructSchema } from '../api/schema/merge-schema.js';
import { nameIsDNSSubdomain, validateMeta } from '../api/validation.js';
import { age, column, humanDuration, nameColumn, timestampMs } from '../api/kinds/printing.js';
import type { CustomResourceColumnDefinition, CustomResourceDefinition, CustomResourceDefinitionVersion } from './customresourcedefinition.js';
import { applyDefaults } from './defaulting.js';
import { additionalPropertiesSchema, itemsSchema, propertyEntries, type JSONSchemaProps } from './json-schema.js';
import { validateAgainstSchema } from './object-validation.js';
import { prune } from './pruning.js';
import { jsonEqual } from '../api/kinds/json.js';

/** The names a CRD serves under: the accepted ones once the server accepted them. */
function servedNames(crd: CustomResourceDefinition): CustomResourceDefinition['spec']['names'] {
  return crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : crd.spec.names;
}

function cellOf(o: KubeObject, c: CustomResourceColumnDefinition, now: number): string | number | boolean | null {
  const v = evaluateJsonPath(o, c.jsonPath);
  if (v === undefined || v === null) return null;
  switch (c.type) {
    case 'date': {
      // Upstream shows a time as how long ago it was, as the Age column does.
      const ms = timestampMs(v);
      return ms === undefined ? String(v) : humanDuration(now - ms);
    }
    case 'integer':
    case 'number':
      return typeof v === 'number' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    default:
      return typeof v === 'string' ? v : JSON.stringify(v);
  }
}

function table(v: CustomResourceDefinitionVersion): ResourceType['table'] {
  const defined = v.additionalPrinterColumns ?? [];
  if (defined.length === 0) {
    return { columns: [nameColumn, column('Age', 'date', 'Time since the object was created.')], cells: (o, now) => [o.metadata?.name ?? '', age(o, now)] };
  }
  const columns: TableColumn[] = [
    nameColumn,
    ...defined.map((c) => ({ name: c.name, type: c.type as TableColumn['type'], format: c.format ?? '', description: c.description ?? '', priority: (c.priority ?? 0) > 0 ? (1 as const) : (0 as const) })),
  ];
  return { columns, cells: (o, now) => [o.metadata?.name ?? '', ...defined.map((c) => cellOf(o, c, now))] };
}

/** How a schema node merges under server-side apply (x-kubernetes-list-type, -list-map-keys, -map-type). */
export function mergeSchemaOf(s: JSONSchemaProps | undefined): Schema | undefined {
  if (!s) return undefined;
  if (s['x-kubernetes-map-type'] === 'atomic') return { type: 'atomic' };
  if (s.type === 'array') {
    const listType = s['x-kubernetes-list-type'] === 'set' || s['x-kubernetes-list-type'] === 'map' ? s['x-kubernetes-list-type'] : 'atomic';
    const l: ListSchema = { type: 'list', strategy: 'replace', listType };
    if (listType === 'map') l.keys = [...(s['x-kubernetes-list-map-keys'] ?? [])];
    const items = mergeSchemaOf(itemsSchema(s));
    if (items) l.items = items;
    return l;
  }
  if (s.type === 'object' || s.properties) {
    const extra = additionalPropertiesSchema(s);
    if (extra || (s.additionalProperties === true && !s.properties)) {
      const values = mergeSchemaOf(extra);
      return values ? { type: 'map', values } : { type: 'map' };
    }
    const fields: Record<string, Schema> = {};
    for (const [name, sub] of propertyEntries(s)) {
      const m = mergeSchemaOf(sub);
      if (m) fields[name] = m;
    }
    return { type: 'struct', fields };
  }
  return undefined;
}

function rootMergeSchema(schema: JSONSchemaProps): StructSchema {
  const root = mergeSchemaOf(schema);
  const fields = root?.type === 'struct' ? { ...root.fields } : {};
  fields['metadata'] = objectMetaMergeSchema();
  return { type: 'struct', fields };
}

/** Unknown fields of a custom object, pruned: those of its ObjectMeta, and those its schema does not declare. */
function pruneUnknown(o: KubeObject, schema: JSONSchemaProps): string[] {
  const meta = unknownFields(o.metadata, objectMetaFieldTree(), { prune: true }).map((p) => `metadata.${p}`);
  return [...meta, ...prune(o, schema, true)];
}

/** The value at a cause's field path (`spec.items[0].name`), or undefined. */
function valueAt(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = m[2] !== undefined ? (Array.isArray(at) ? at[Number(m[2])] : undefined) : (at as Record<string, unknown>)[m[1]!];
  }
  return at;
}

/**
 * Validation ratcheting (upstream's CRDValidationRatcheting, on by default since 1.30): an update
 * may keep a value the schema has since been tightened against, as long as it does not change it.
 * A required field belongs to its parent: only an unchanged parent lets its absence pass.
 */
function ratchet(causes: StatusCause[], o: KubeObject, old: KubeObject): StatusCause[] {
  return causes.filter((c) => {
    const path = c.field ?? '';
    const node = c.reason === 'FieldValueRequired' ? path.replace(/(\.[^.[\]]+|\[\d+\])$/, '') : path;
    if (!node || node === '<nil>') return true;
    return !jsonEqual(valueAt(o, node), valueAt(old, node));
  });
}

function validateCustom(o: KubeObject, old: KubeObject | undefined, namespaced: boolean, schema: JSONSchemaProps, v: CustomResourceDefinitionVersion): StatusCause[] {
  const out = validateMeta(o, old, namespaced, nameIsDNSSubdomain, true);
  const schemaCauses = validateAgainstSchema(o, schema, '');
  out.push(...(old ? ratchet(schemaCauses, o, old) : schemaCauses));
  const scale = v.subresources?.scale;
  if (scale) {
    const replicas = evaluateJsonPath(o, scale.specReplicasPath);
    if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)) {
      out.push({ reason: 'FieldValueInvalid', field: scale.specReplicasPath.replace(/^\./, ''), message: `Invalid value: ${JSON.stringify(replicas)}: should be a non-negative integer` });
    }
  }
  return out;
}

/** One ResourceType per served version of `crd`. */
export function customResourceTypes(crd: CustomResourceDefinition): ResourceType[] {
  const names = servedNames(crd);
  const group = crd.spec.group;
  const namespaced = crd.spec.scope === 'Namespaced';
  const storage = crd.spec.versions.find((v) => v.storage)?.name ?? '';
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v): ResourceType => {
      const schema: JSONSchemaProps = v.schema?.openAPIV3Schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
      const subresources: ResourceType['subresources'] = [];
      if (v.subresources?.status) subresources.push('status');
      if (v.subresources?.scale) subresources.push('scale');
      const fieldSelectors: ResourceType['fieldSelectors'] = {};
      for (const f of v.selectableFields ?? []) {
        fieldSelectors[f.jsonPath.replace(/^\./, '')] = (o) => {
          const value = evaluateJsonPath(o, f.jsonPath);
          return value === undefined || value === null ? undefined : String(value);
        };
      }
      const rt: ResourceType = {
        group,
        version: v.name,
        resource: names.plural,
        kind: names.kind,
        listKind: names.listKind ?? `${names.kind}List`,
        singular: names.singular ?? names.kind.toLowerCase(),
        namespaced,
        shortNames: names.shortNames ?? [],
        categories: names.categories ?? [],
        subresources,
        fieldSelectors,
        table: table(v),
        hasGeneration: true,
        storageKey: `${group}/${names.plural}`,
        defaults: (o) => applyDefaults(o, schema),
        onRead: (o) => applyDefaults(o, schema),
        storageVersion: storage,
        validate: (o, old) => validateCustom(o, old, namespaced, schema, v),
        pruneUnknownFields: (o) => pruneUnknown(o, schema),
        listItemsKeepType: true,
        mergeSchema: rootMergeSchema(schema),
        refusesStrategicMerge: true,
        openApiSchema: schema as Record<string, unknown>,
      };
      if (v.subresources?.scale) rt.scalePaths = { ...v.subresources.scale };
      const conversion = crd.spec.conversion;
      if (conversion?.strategy === 'Webhook' && conversion.webhook?.clientConfig) {
        rt.conversionWebhook = { clientConfig: conversion.webhook.clientConfig, conversionReviewVersions: conversion.webhook.conversionReviewVersions ?? [] };
      }
      if (v.deprecated) rt.warnings = [v.deprecationWarning ?? `${group}/${v.name} ${names.kind} is deprecated`];
      return rt;
    });
}
