// apiextensions.k8s.io/v1 CustomResourceDefinition: a kind described by its users. As upstream's
// apiextensions server adds it beside kube-apiserver's kinds, it lives here with its schema rules
// rather than among the built-in kinds of src/api (which know nothing of apiextensions); the
// resource types it adds are in ./custom-resource.ts.
import { field } from '../api/errors.js';
import type { ResourceType } from '../api/resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../api/types.js';
import { childPath, indexPath, isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain, validateImmutable, validateMeta } from '../api/validation.js';
import { validateCRDSchema } from './schema-validation.js';
import type { JSONSchemaProps } from './json-schema.js';
import { isObject, obj, objArr, str } from '../api/kinds/json.js';
import { column, nameColumn } from '../api/kinds/printing.js';
import { defaultWebhookClientConfig, validateReviewVersions, validateWebhookClientConfig, type WebhookClientConfig } from '../api/webhook-client-config.js';

export const CRD_GROUP = 'apiextensions.k8s.io';
/** Held by a deleted CRD until its objects are gone (upstream's name). */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface CustomResourceColumnDefinition {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: Record<string, never>; scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string } };
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: { jsonPath: string }[];
}

export interface CustomResourceDefinitionCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinition extends KubeObject {
  metadata: ObjectMeta;
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceDefinitionVersion[];
    conversion?: CustomResourceConversion;
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CustomResourceDefinitionCondition[];
    acceptedNames?: CustomResourceDefinitionNames;
    storedVersions?: string[];
  };
}

/** How objects convert between the served versions: None (apiVersion only) or through a webhook. */
export interface CustomResourceConversion {
  strategy: string;
  webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] };
}

/** The ConversionReview versions this server speaks, in upstream's order of preference. */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export function asCRD(o: KubeObject): CustomResourceDefinition {
  return o as CustomResourceDefinition;
}

export function crdCondition(crd: CustomResourceDefinition, type: string): CustomResourceDefinitionCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

/** Sets a condition, keeping its transition time when the status does not change. */
export function setCRDCondition(crd: CustomResourceDefinition, c: Omit<CustomResourceDefinitionCondition, 'lastTransitionTime'>, now: string): void {
  const status = (crd.status ??= {});
  const list = (status.conditions ??= []);
  const i = list.findIndex((x) => x.type === c.type);
  const old = i >= 0 ? list[i] : undefined;
  const next: CustomResourceDefinitionCondition = { ...c, lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now };
  if (i >= 0) list[i] = next;
  else list.push(next);
}

function storageVersion(o: KubeObject): string | undefined {
  return objArr(obj(o.spec).versions).find((v) => v.storage === true)?.name as string | undefined;
}

function defaultCRD(o: KubeObject): void {
  if (!isObject(o.spec)) return;
  const spec = o.spec;
  if (spec.conversion === undefined || spec.conversion === null) spec.conversion = { strategy: 'None' };
  defaultWebhookClientConfig(obj(obj(spec.conversion).webhook).clientConfig);
  const names = spec.names;
  if (isObject(names)) {
    if (!names.singular && typeof names.kind === 'string') names.singular = names.kind.toLowerCase();
    if (!names.listKind && typeof names.kind === 'string' && names.kind) names.listKind = `${names.kind}List`;
  }
}

function prepareForCreate(o: KubeObject): void {
  const stored = storageVersion(o);
  o.status = stored ? { storedVersions: [stored] } : {};
}

function prepareForUpdate(o: KubeObject, old: KubeObject): void {
  // A new storage version is recorded: objects may now be stored in it.
  const status = obj(old.status);
  const stored = [...((status.storedVersions as string[] | undefined) ?? [])];
  const now = storageVersion(o);
  if (now && !stored.includes(now)) stored.push(now);
  o.status = { ...status, storedVersions: stored };
}

function joinErrors(errs: string[]): string {
  return errs.join(',');
}

function validateNames(names: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const plural = str(names.plural);
  const singular = str(names.singular);
  const kind = str(names.kind);
  const listKind = str(names.listKind);
  const lowerLabel = (v: string, p: string, mixedCase = false): void => {
    const errs = isDNS1035Label(mixedCase ? v.toLowerCase() : v);
    if (v && errs.length) out.push(field.invalid(p, v, mixedCase ? `may have mixed case, but should otherwise match: ${joinErrors(errs)}` : joinErrors(errs)));
  };
  lowerLabel(plural, childPath(path, 'plural'));
  if (!plural) out.push(field.required(childPath(path, 'plural')));
  lowerLabel(singular, childPath(path, 'singular'));
  if (!singular) out.push(field.required(childPath(path, 'singular')));
  lowerLabel(kind, childPath(path, 'kind'), true);
  if (!kind) out.push(field.required(childPath(path, 'kind')));
  lowerLabel(listKind, childPath(path, 'listKind'), true);
  if (!listKind) out.push(field.required(childPath(path, 'listKind')));
  else if (listKind === kind) out.push(field.invalid(childPath(path, 'listKind'), listKind, 'kind and listKind may not be the same'));
  for (const [key, list] of [['shortNames', names.shortNames], ['categories', names.categories]] as const) {
    (Array.isArray(list) ? list : []).forEach((v, i) => {
      const errs = isDNS1035Label(String(v));
      if (errs.length) out.push(field.invalid(indexPath(childPath(path, key), i), v, joinErrors(errs)));
    });
  }
  return out;
}

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];

function validateColumns(columns: Record<string, unknown>[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  columns.forEach((c, i) => {
    const p = indexPath(path, i);
    if (!str(c.name)) out.push(field.required(childPath(p, 'name')));
    if (!COLUMN_TYPES.includes(str(c.type))) out.push(field.notSupported(childPath(p, 'type'), c.type ?? '', COLUMN_TYPES));
    if (c.format && !COLUMN_FORMATS.includes(str(c.format))) out.push(field.notSupported(childPath(p, 'format'), c.format, COLUMN_FORMATS));
    if (typeof c.priority === 'number' && c.priority < 0) out.push(field.invalid(childPath(p, 'priority'), c.priority, 'must be greater than or equal to 0'));
    if (!str(c.jsonPath)) out.push(field.required(childPath(p, 'jsonPath')));
    else if (!str(c.jsonPath).startsWith('.')) out.push(field.invalid(childPath(p, 'jsonPath'), c.jsonPath, 'must be a simple json path starting with .'));
  });
  return out;
}

function validateScale(scale: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const check = (key: string, ok: (v: string) => boolean, why: string, required: boolean): void => {
    const v = str(scale[key]);
    if (!v) {
      if (required) out.push(field.required(childPath(path, key)));
      return;
    }
    if (!ok(v)) out.push(field.invalid(childPath(path, key), v, why));
  };
  // Simple paths only (no indexes or filters): the scale subresource writes to them.
  const simple = (v: string, under: string) => new RegExp(`^\\.${under}(\\.[A-Za-z0-9_-]+)+$`).test(v);
  check('specReplicasPath', (v) => simple(v, 'spec'), 'should be a json path under .spec', true);
  check('statusReplicasPath', (v) => simple(v, 'status'), 'should be a json path under .status', true);
  check('labelSelectorPath', (v) => simple(v, 'spec') || simple(v, 'status'), 'should be a json path under either .spec or .status', false);
  return out;
}

function validateVersions(versions: Record<string, unknown>[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (versions.length === 0) return [field.invalid(path, '', 'must have exactly one version marked as storage version'), field.required(path, 'must have at least one version')];
  const seen = new Set<string>();
  let storage = 0;
  let served = 0;
  versions.forEach((v, i) => {
    const p = indexPath(path, i);
    const name = str(v.name);
    if (!name) out.push(field.required(childPath(p, 'name')));
    else {
      const errs = isDNS1035Label(name);
      if (errs.length) out.push(field.invalid(childPath(p, 'name'), name, joinErrors(errs)));
      if (seen.has(name)) out.push(field.duplicate(childPath(p, 'name'), name));
      seen.add(name);
    }
    if (v.storage === true) storage++;
    if (v.served === true) served++;
    const subresources = obj(v.subresources);
    const schema = obj(v.schema).openAPIV3Schema;
    out.push(...validateCRDSchema(schema, `${childPath(p, 'schema')}.openAPIV3Schema`, { statusSubresource: isObject(subresources.status) }));
    if (isObject(subresources.scale)) out.push(...validateScale(subresources.scale, `${childPath(p, 'subresources')}.scale`));
    out.push(...validateColumns(objArr(v.additionalPrinterColumns), childPath(p, 'additionalPrinterColumns')));
  });
  if (storage !== 1) out.push(field.invalid(path, `${storage} storage versions`, 'must have exactly one version marked as storage version'));
  if (served === 0) out.push(field.invalid(path, `${versions.length} versions, none served`, 'must have at least one served version'));
  return out;
}

/** Groups the server serves itself: a CRD may not add versions to them (they would shadow its kinds). */
const SERVED_GROUPS = new Set([
  'admissionregistration.k8s.io', 'apiextensions.k8s.io', 'apiregistration.k8s.io', 'authentication.k8s.io', 'authorization.k8s.io',
  'certificates.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io', 'events.k8s.io', 'flowcontrol.apiserver.k8s.io', 'networking.k8s.io',
  'node.k8s.io', 'rbac.authorization.k8s.io', 'resource.k8s.io', 'scheduling.k8s.io', 'storage.k8s.io',
]);
const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group === 'kubernetes.io' || group.endsWith('.k8s.io') || group.endsWith('.kubernetes.io');
}

/** Upstream's rule for the groups Kubernetes itself owns: an API review must have approved them. */
function validateApproval(o: KubeObject, group: string): StatusCause[] {
  if (!isProtectedGroup(group)) return [];
  const path = `metadata.annotations[${APPROVAL_ANNOTATION}]`;
  const v = o.metadata.annotations?.[APPROVAL_ANNOTATION];
  if (v === undefined) return [field.required(path, `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`)];
  if (!/^https?:\/\/\S+$/.test(v) && !v.startsWith('unapproved')) return [field.invalid(path, v, 'protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111')];
  return [];
}

/** Every version objects may be stored in stays a version of the CRD, and the storage version is one of them (upstream). */
function validateStoredVersions(o: KubeObject): StatusCause[] {
  const stored = (obj(o.status).storedVersions as unknown[] | undefined) ?? [];
  const versions = new Set(objArr(obj(o.spec).versions).map((v) => str(v.name)));
  const out: StatusCause[] = [];
  stored.forEach((v, i) => {
    if (!versions.has(str(v))) out.push(field.invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  });
  const storage = storageVersion(o);
  if (storage && stored.length > 0 && !stored.includes(storage)) out.push(field.invalid('status.storedVersions', JSON.stringify(stored), `must have the storage version ${storage}`));
  return out;
}

/** An update keeps a stored CRD valid whose review versions this server would no longer accept, as upstream's. */
function acceptsRecognizedReviewVersion(old: KubeObject): boolean {
  const versions = (obj(obj(obj(old.spec).conversion).webhook).conversionReviewVersions as string[] | undefined) ?? [];
  return versions.length === 0 || versions.some((v) => CONVERSION_REVIEW_VERSIONS.includes(v));
}

/**
 * Upstream validateCustomResourceConversion. Its paths are those of the internal type upstream
 * validates (spec.conversion.webhookClientConfig), as its messages name them.
 */
function validateConversion(conversion: Record<string, unknown>, requireRecognized: boolean): StatusCause[] {
  const strategy = str(conversion.strategy);
  const webhook = isObject(conversion.webhook) ? conversion.webhook : undefined;
  if (strategy !== 'None' && strategy !== 'Webhook') return [field.notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook'])];
  const out: StatusCause[] = [];
  const clientConfig = webhook && isObject(webhook.clientConfig) ? webhook.clientConfig : undefined;
  const reviewVersions = webhook && Array.isArray(webhook.conversionReviewVersions) ? webhook.conversionReviewVersions.map(str) : [];
  if (strategy === 'Webhook') {
    if (!clientConfig) out.push(field.required('spec.conversion.webhookClientConfig', 'required when strategy is set to Webhook'));
    else out.push(...validateWebhookClientConfig('spec.conversion.webhookClientConfig', clientConfig));
    out.push(...validateReviewVersions('spec.conversion.conversionReviewVersions', reviewVersions, CONVERSION_REVIEW_VERSIONS, requireRecognized));
    return out;
  }
  if (clientConfig) out.push(field.forbidden('spec.conversion.webhookClientConfig', 'should not be set when strategy is not set to Webhook'));
  if (reviewVersions.length > 0) out.push(field.forbidden('spec.conversion.conversionReviewVersions', 'should not be set when strategy is not set to Webhook'));
  return out;
}

function validateCRD(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain, true);
  const spec = obj(o.spec);
  const group = str(spec.group);
  const names = obj(spec.names);
  if (!group) out.push(field.required('spec.group'));
  else {
    const errs = isDNS1123Subdomain(group);
    if (errs.length) out.push(field.invalid('spec.group', group, joinErrors(errs)));
    else if (!group.includes('.')) out.push(field.invalid('spec.group', group, 'should be a domain with at least one dot'));
    else if (SERVED_GROUPS.has(group)) out.push(field.forbidden('spec.group', `${group} is served by the API server itself`));
    else out.push(...validateApproval(o, group));
  }
  const name = o.metadata.name ?? '';
  if (name && str(names.plural) && group && name !== `${str(names.plural)}.${group}`) out.push(field.invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  const scope = str(spec.scope);
  if (!scope) out.push(field.required('spec.scope'));
  else if (scope !== 'Namespaced' && scope !== 'Cluster') out.push(field.notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  out.push(...validateNames(names, 'spec.names'));
  out.push(...validateVersions(objArr(spec.versions), 'spec.versions'));
  out.push(...validateConversion(obj(spec.conversion), old === undefined || acceptsRecognizedReviewVersion(old)));
  if (spec.preserveUnknownFields === true) out.push(field.invalid('spec.preserveUnknownFields', true, 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead'));
  if (old) {
    out.push(...validateStoredVersions(o));
    const was = obj(old.spec);
    out.push(...validateImmutable(spec.group, was.group, 'spec.group'));
    out.push(...validateImmutable(names.plural, obj(was.names).plural, 'spec.names.plural'));
    out.push(...validateImmutable(spec.scope, was.scope, 'spec.scope'));
  }
  return out;
}

/** Where a schema holds x-kubernetes-validations rules, by path. */
function celRulePaths(schema: unknown, path: string, out: string[]): void {
  if (!isObject(schema)) return;
  if (Array.isArray(schema['x-kubernetes-validations']) && schema['x-kubernetes-validations'].length > 0) out.push(path);
  for (const [name, sub] of Object.entries(obj(schema.properties))) celRulePaths(sub, `${path}.properties[${name}]`, out);
  if (isObject(schema.items)) celRulePaths(schema.items, `${path}.items`, out);
  if (isObject(schema.additionalProperties)) celRulePaths(schema.additionalProperties, `${path}.additionalProperties`, out);
  for (const key of ['allOf', 'anyOf', 'oneOf']) objArr(schema[key]).forEach((s, i) => celRulePaths(s, `${path}.${key}[${i}]`, out));
}

/** CEL rules are accepted but not evaluated: the writer is told where, rather than left to assume. */
function crdWarnings(o: KubeObject): string[] {
  const paths: string[] = [];
  objArr(obj(o.spec).versions).forEach((v, i) => celRulePaths(obj(v.schema).openAPIV3Schema, `spec.versions[${i}].schema.openAPIV3Schema`, paths));
  return paths.map((p) => `${p}: x-kubernetes-validations rules are not evaluated by this server; objects are checked against the rest of the schema only`);
}

export const customResourceDefinitionResource: ResourceType = {
  group: CRD_GROUP,
  version: 'v1',
  resource: 'customresourcedefinitions',
  kind: 'CustomResourceDefinition',
  listKind: 'CustomResourceDefinitionList',
  singular: 'customresourcedefinition',
  namespaced: false,
  shortNames: ['crd', 'crds'],
  categories: ['api-extensions'],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [nameColumn, column('Created At', 'date', 'Time when the object was created.')],
    cells: (o) => [o.metadata?.name ?? '', (o.metadata?.creationTimestamp as string | undefined) ?? null],
  },
  hasGeneration: true,
  storageKey: `${CRD_GROUP}/customresourcedefinitions`,
  defaults: defaultCRD,
  validate: validateCRD,
  prepareForCreate,
  prepareForUpdate,
  warningsFor: crdWarnings,
  deletionFinalizers: [CRD_CLEANUP_FINALIZER],
  prepareForDeletion: (o) => {
    setCRDCondition(asCRD(o), { type: 'Terminating', status: 'True', reason: 'InstanceDeletionPending', message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon' }, String(o.metadata.deletionTimestamp));
  },
};
