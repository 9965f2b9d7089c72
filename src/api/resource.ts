// What the API server needs to know about one served resource. One ResourceType per kind,
// defined in src/api/kinds/<kind>.ts and collected in src/api/registry.ts.
import type { KubeObject, StatusCause } from './types.js';
import type { StructSchema } from './schema/merge-schema.js';
import type { WebhookClientConfig } from './webhook-client-config.js';

export type Subresource = 'status' | 'approval' | 'scale' | 'binding' | 'eviction' | 'log' | 'exec' | 'attach' | 'portforward' | 'token' | 'finalize';

/** Who makes a write, as authentication established it (what a kind may record of its requester). */
export interface Requester {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format: string;
  description: string;
  /** 0: always shown; 1: only with -o wide. */
  priority: 0 | 1;
}

export interface TableConvertor {
  columns: TableColumn[];
  /** One row's cells, same length as columns. `now` is ms since epoch (for Age columns). */
  cells(obj: KubeObject, now: number): (string | number | boolean | null)[];
}

/** Converts one object between a served version and the storage version; neither changes what it is given. */
export interface VersionConversion {
  /** An object of this version, in the storage version. */
  toStorage(obj: KubeObject): KubeObject;
  /** An object of the storage version, in this version. */
  fromStorage(obj: KubeObject): KubeObject;
}

export interface ResourceType {
  group: string;
  version: string;
  /** Plural, lower-case: "pods". */
  resource: string;
  kind: string;
  listKind: string;
  singular: string;
  namespaced: boolean;
  shortNames: string[];
  categories: string[];
  subresources: Subresource[];
  /** Field selectors beyond metadata.name / metadata.namespace, returning the field's string form. */
  fieldSelectors: Record<string, (obj: KubeObject) => string | undefined>;
  table: TableConvertor;
  /** Spec changes bump metadata.generation (upstream: every kind with a spec except pods? no: pods too). */
  hasGeneration: boolean;
  /** Fills upstream defaults in place (on create and on update). */
  defaults(obj: KubeObject): void;
  /** Validation as upstream for supported fields; old is set on update. Empty array: valid. */
  validate(obj: KubeObject, old: KubeObject | undefined): StatusCause[];
  /**
   * Validation of a status write (whose spec is the stored one), where the kind's upstream status
   * strategy checks less than a full update does; validate() where unset.
   */
  validateStatusUpdate?(obj: KubeObject, old: KubeObject): StatusCause[];
  /**
   * Upstream strategy PrepareForCreate: runs on create after defaults() and before validate().
   * Resets status to what a new object has (e.g. Pod: phase Pending + qosClass; Deployment: {}),
   * adds computed fields (Namespace: spec.finalizers ["kubernetes"]).
   */
  prepareForCreate?(obj: KubeObject, requester?: Requester): void;
  /**
   * Upstream's status (and other subresource) strategies' PrepareForUpdate: what a write through
   * `subresource` may not change is taken back from `old`; `now` stamps conditions.
   */
  prepareForSubresourceUpdate?(subresource: string, obj: KubeObject, old: KubeObject, now: string): void;
  /** Validation of a write through a subresource (CertificateSigningRequest's status and approval); before validateStatusUpdate. */
  validateSubresourceUpdate?(subresource: string, obj: KubeObject, old: KubeObject): StatusCause[];
  /**
   * Upstream strategy PrepareForUpdate for main-resource writes: runs after defaults() and before
   * validate(). Carries server-assigned fields the client may omit (Service clusterIP/clusterIPs,
   * ipFamilies, nodePorts) and bumps DaemonSet's template-generation annotation.
   */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  /** The propagation policy of a delete that names none (upstream DefaultGarbageCollectionPolicy); Background when unset. */
  defaultPropagationPolicy?: 'Orphan';
  /** A delete answers with the deleted object instead of a Status (upstream ReturnDeletedObject). */
  returnsDeletedObject?: boolean;
  /** Status a create may set (Node: agents register with theirs); every other kind's new objects start without one. */
  keepsStatusOnCreate?: boolean;
  /**
   * Upstream CheckGracefulDelete: how many seconds a deletion waits before the object goes
   * (a bound, running pod waits for its node to stop it); 0 when unset.
   */
  deletionGracePeriod?(obj: KubeObject, requestedSeconds: number | undefined): number;
  /** Finalizers every deletion adds, so the server can clean up first (CRD: its objects go before it). */
  deletionFinalizers?: readonly string[];
  /** What a deletion that has to wait changes besides its timestamps (Namespace: phase Terminating). */
  prepareForDeletion?(obj: KubeObject): void;
  /** Finalizers beyond metadata.finalizers that hold a deleted object (Namespace: spec.finalizers). */
  extraFinalizers?(obj: KubeObject): readonly string[];
  /** Why an object may not be deleted at all (Namespace: the ones the system lives in), or undefined. */
  refuseDelete?(obj: KubeObject): string | undefined;

  // ---- what custom resources say for themselves (built-in kinds read it off their messages) ----

  /** The /registry/<storageKey>/ segment of its keys; the resource name when unset (upstream's keys for built-ins). */
  storageKey?: string;
  /**
   * Removes from `obj` the fields its schema does not declare and returns their paths (upstream
   * prunes custom resources: the paths become unknown-field errors or warnings per fieldValidation).
   */
  pruneUnknownFields?(obj: KubeObject): string[];
  /** How its objects merge under server-side apply. */
  mergeSchema?: StructSchema;
  /** Strategic merge patches are refused with 415: nothing says how its lists merge. */
  refusesStrategicMerge?: boolean;
  /** Where the scale subresource reads and writes, as JSON paths (`.spec.replicas`). */
  scalePaths?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  /** Its OpenAPI v3 schema (custom resources), published beside the built-in kinds' definitions. */
  openApiSchema?: Record<string, unknown>;
  /** What a valid object should still be told about (a CRD whose CEL rules this server does not run). */
  warningsFor?(obj: KubeObject): string[];
  /** What reading an object from storage does to it (custom resources: a default added to the schema later shows on old objects, as upstream defaults on read). */
  onRead?(obj: KubeObject): void;
  /** The version its objects are stored in, when it serves several (custom resources; built-in kinds with `conversion`). */
  storageVersion?: string;
  /**
   * A built-in kind served at a version other than its storage version: upstream's conversion
   * functions between the two. Objects are stored in storageVersion; each write converts to it and
   * each read from it, so every served version sees the same objects.
   */
  conversion?: VersionConversion;
  /**
   * Its versions convert through a webhook (a CRD with conversion strategy Webhook): objects are
   * stored in storageVersion and converted to and from the version a client uses.
   */
  conversionWebhook?: { clientConfig: WebhookClientConfig; conversionReviewVersions: string[] };
  /** Why creates are refused for now (a terminating CRD's objects), or undefined. */
  refusesCreate?: string;
  /** Items of its lists carry kind and apiVersion (custom resources, as upstream's unstructured lists). */
  listItemsKeepType?: boolean;
  /** Warnings every request to it returns (a deprecated version). */
  warnings?: string[];
}

/** The /registry/<segment>/ its objects are stored under. */
export function storageSegment(rt: Pick<ResourceType, 'resource' | 'storageKey'>): string {
  return rt.storageKey ?? rt.resource;
}

/** A status subresource exists: main-resource writes keep the old status, status writes keep the rest. */
export function hasStatusSubresource(rt: { readonly subresources: readonly string[] }): boolean {
  return rt.subresources.includes('status');
}

/**
 * Whether `rt` is the version a built-in kind is kept in: the one to watch, index by group and
 * resource, and delete objects through. A version served by conversion (`conversion`) is the same
 * objects again; a custom kind's versions (webhook conversion) are each their own ResourceType and
 * stay as they are.
 */
export function isStorageVersion(rt: Pick<ResourceType, 'conversion'>): boolean {
  return !rt.conversion;
}
