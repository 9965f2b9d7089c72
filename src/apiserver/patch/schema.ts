// How the built-in kinds merge, derived from the patchStrategy/patchMergeKey and listType/listMapKey
// markers on the upstream Go types. Only what differs from the defaults is written down:
//   - maps not named here merge key by key (strategic merge) and are owned field by field (apply);
//   - lists not named here are replaced whole (strategic merge) and owned as one value (apply).
// Strategic merge and server-side apply read the same tree but not always the same keys: container
// ports merge by containerPort in a strategic patch, yet apply keys them by (containerPort, protocol).
import type { GroupVersionKind } from '../../api/types.js';
import { resourceTypeForKind } from '../../api/registry.js';
import { hasStatusSubresource as statusSubresource } from '../../api/resource.js';

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
const ATOMIC_MAP: MapSchema = { type: 'map', atomic: true };
const MAP: MapSchema = { type: 'map' };

function struct(fields: Record<string, Schema>, alwaysPresent = false): StructSchema {
  return alwaysPresent ? { type: 'struct', fields, alwaysPresent } : { type: 'struct', fields };
}

/** patchStrategy=merge + patchMergeKey on a list of objects; apply keys by the same field. */
function mergeList(key: string, items?: Schema, applyKeys: string[] = [key], keyDefaults?: Record<string, unknown>): ListSchema {
  const l: ListSchema = { type: 'list', strategy: 'merge', mergeKey: key, listType: 'map', keys: applyKeys };
  if (items) l.items = items;
  if (keyDefaults) l.keyDefaults = keyDefaults;
  return l;
}

/** patchStrategy=merge on a list of scalars: a set. */
const SET_LIST: ListSchema = { type: 'list', strategy: 'merge', listType: 'set' };

/** listType=map without a patch strategy: keyed for apply, replaced by strategic merge. */
function applyOnlyMapList(keys: string[], items?: Schema): ListSchema {
  const l: ListSchema = { type: 'list', strategy: 'replace', listType: 'map', keys };
  if (items) l.items = items;
  return l;
}

// ---- meta/v1 --------------------------------------------------------------------------------

const labelSelector = ATOMIC;

export const objectMetaSchema: StructSchema = struct(
  {
    labels: MAP,
    annotations: MAP,
    finalizers: SET_LIST,
    ownerReferences: mergeList('uid', ATOMIC),
  },
  true,
);

// ---- core/v1 pod ----------------------------------------------------------------------------

const envVar = struct({
  valueFrom: struct({ configMapKeyRef: ATOMIC, secretKeyRef: ATOMIC, fieldRef: ATOMIC, resourceFieldRef: ATOMIC }),
});

const container = struct({
  ports: mergeList('containerPort', undefined, ['containerPort', 'protocol'], { protocol: 'TCP' }),
  env: mergeList('name', envVar),
  volumeMounts: mergeList('mountPath'),
  volumeDevices: mergeList('devicePath'),
  resources: struct({ limits: MAP, requests: MAP, claims: applyOnlyMapList(['name']) }, true),
});

const podSpec = struct({
  volumes: mergeList('name'),
  initContainers: mergeList('name', container),
  containers: { ...mergeList('name', container), alwaysPresent: true },
  ephemeralContainers: mergeList('name', container),
  imagePullSecrets: mergeList('name', ATOMIC),
  hostAliases: mergeList('ip'),
  topologySpreadConstraints: mergeList('topologyKey', struct({ labelSelector }), ['topologyKey', 'whenUnsatisfiable']),
  resourceClaims: mergeList('name'),
  schedulingGates: mergeList('name'),
  nodeSelector: ATOMIC_MAP,
  overhead: MAP,
  // Pod (anti-)affinity terms sit in atomic lists, so only the node selector needs a rule.
  affinity: struct({ nodeAffinity: struct({ requiredDuringSchedulingIgnoredDuringExecution: ATOMIC }) }),
});

const podStatus = struct(
  {
    conditions: mergeList('type'),
    podIPs: mergeList('ip'),
    hostIPs: mergeList('ip'),
    resourceClaimStatuses: mergeList('name'),
  },
  true,
);

const podTemplateSpec = struct({ metadata: objectMetaSchema, spec: struct(podSpec.fields, true) }, true);
const jobSpecSchema = struct({ selector: labelSelector, template: podTemplateSpec }, true);

const conditionsStatus = struct({ conditions: mergeList('type') }, true);

// ---- the served kinds -----------------------------------------------------------------------

function kind(fields: Record<string, Schema>): StructSchema {
  return struct({ metadata: objectMetaSchema, ...fields });
}

const KINDS: Record<string, StructSchema> = {
  '/Pod': kind({ spec: struct(podSpec.fields, true), status: podStatus }),
  '/Node': kind({
    spec: struct({ podCIDRs: SET_LIST }, true),
    status: struct({ conditions: mergeList('type'), addresses: mergeList('type'), capacity: MAP, allocatable: MAP }, true),
  }),
  '/Namespace': kind({ spec: struct({}, true), status: conditionsStatus }),
  '/Service': kind({
    spec: struct({ ports: mergeList('port', undefined, ['port', 'protocol'], { protocol: 'TCP' }), selector: ATOMIC_MAP }, true),
    status: conditionsStatus,
  }),
  '/Endpoints': kind({}),
  '/Event': kind({}),
  '/ConfigMap': kind({ data: MAP, binaryData: MAP }),
  '/Secret': kind({ data: MAP, stringData: MAP }),
  'apps/Deployment': kind({
    spec: struct({ selector: labelSelector, template: podTemplateSpec, strategy: struct({}, true) }, true),
    status: conditionsStatus,
  }),
  'apps/ReplicaSet': kind({ spec: struct({ selector: labelSelector, template: podTemplateSpec }, true), status: conditionsStatus }),
  '/ReplicationController': kind({ spec: struct({ selector: ATOMIC_MAP, template: podTemplateSpec }, true), status: conditionsStatus }),
  'batch/Job': kind({ spec: jobSpecSchema, status: conditionsStatus }),
  'batch/CronJob': kind({ spec: struct({ jobTemplate: struct({ metadata: objectMetaSchema, spec: jobSpecSchema }, true) }, true) }),
  'apps/DaemonSet': kind({
    spec: struct({ selector: labelSelector, template: podTemplateSpec, updateStrategy: struct({}, true) }, true),
    status: conditionsStatus,
  }),
  'apps/StatefulSet': kind({
    spec: struct({ selector: labelSelector, template: podTemplateSpec, updateStrategy: struct({}, true), ordinals: struct({}, true), persistentVolumeClaimRetentionPolicy: struct({}, true) }, true),
    status: conditionsStatus,
  }),
  'coordination.k8s.io/Lease': kind({ spec: struct({}, true) }),
  'policy/PodDisruptionBudget': kind({
    spec: struct({ selector: labelSelector }, true),
    status: struct({ conditions: mergeList('type'), disruptedPods: MAP }, true),
  }),
  'autoscaling/Scale': kind({ spec: struct({}, true), status: struct({}, true) }),
};

/** Shared, so schema nodes stay the same objects and per-schema caches keep working. */
const OTHER_KIND = kind({});

/** Root schema for a kind; unknown kinds get only the ObjectMeta rules. */
export function schemaFor(gvk: Pick<GroupVersionKind, 'group' | 'kind'>): StructSchema {
  return KINDS[`${gvk.group}/${gvk.kind}`] ?? OTHER_KIND;
}

/** Kinds whose status is written through the status subresource, so main-resource writes drop it: as the kind says. */
export function hasStatusSubresource(gvk: Pick<GroupVersionKind, 'group' | 'version' | 'kind'>): boolean {
  const rt = resourceTypeForKind(gvk.group, gvk.version, gvk.kind);
  return rt !== undefined && statusSubresource(rt);
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
