// core/v1 ResourceQuota: what a namespace may hold in all (objects by count, compute by requests
// and limits, storage by claims), enforced by the ResourceQuota admission plugin and counted into
// status.used by its controller.
import { field } from '../errors.js';
import { amountOf, amountText, resourceList } from '../resource-list.js';
import { quantityErrors, quantityText } from '../quantity.js';
import { COMPUTE_QUOTA_RESOURCES, CPU_MEMORY_QUOTA_RESOURCES, isExtendedResourceName, isQuotaHugePages } from '../resource-names.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { invalidRendered, isQualifiedName, keyPath, nameIsDNSSubdomain, validateMeta, validateObjectMetaUpdate } from '../validation.js';
import { arr, isObject, obj, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export interface ResourceQuota extends KubeObject {
  metadata: ObjectMeta;
  spec?: { hard?: Record<string, string>; scopes?: string[]; scopeSelector?: { matchExpressions?: { scopeName: string; operator: string; values?: string[] }[] } };
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

/** Resource names known to the system (anything else unqualified is refused). */
const STANDARD_RESOURCES = new Set([
  ...COMPUTE_QUOTA_RESOURCES,
  'pods',
  'resourcequotas',
  'services',
  'replicationcontrollers',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);

/** The unqualified names quota tracks: the standard ones less bare `storage`. */
const QUOTA_RESOURCES = new Set([...STANDARD_RESOURCES].filter((r) => r !== 'storage'));

/** Names counted in whole units. */
const INTEGER_RESOURCES = new Set(['pods', 'resourcequotas', 'services', 'replicationcontrollers', 'secrets', 'configmaps', 'persistentvolumeclaims', 'services.nodeports', 'services.loadbalancers']);

export const QUOTA_SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'];
const POD_COMPUTE = new Set(CPU_MEMORY_QUOTA_RESOURCES);
const CONFLICTING_SCOPES = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];
const EXISTS_ONLY_SCOPES = new Set(['BestEffort', 'NotBestEffort', 'Terminating', 'NotTerminating', 'CrossNamespacePodAffinity']);

function isStandardQuotaResource(name: string): boolean {
  return QUOTA_RESOURCES.has(name) || isQuotaHugePages(name);
}

function scopeValidFor(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || POD_COMPUTE.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    default:
      return true;
  }
}

function validateResourceName(name: string, path: string): StatusCause[] {
  const qualified = isQualifiedName(name);
  if (qualified.length > 0) return qualified.map((m) => field.invalid(path, name, m));
  if (name.includes('/')) return [];
  const out: StatusCause[] = [];
  if (!STANDARD_RESOURCES.has(name) && !isQuotaHugePages(name)) out.push(field.invalid(path, name, 'must be a standard resource type or fully qualified'));
  if (!isStandardQuotaResource(name)) out.push(field.invalid(path, name, 'must be a standard resource for quota'));
  return out;
}

function validateAmounts(list: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isObject(list)) return out;
  for (const [k, v] of Object.entries(list)) {
    const at = keyPath(path, k);
    out.push(...validateResourceName(k, at));
    const errs = quantityErrors(v);
    if (errs.length > 0) {
      out.push(...errs.map((m) => field.invalid(at, quantityText(v), m)));
      continue;
    }
    const a = amountOf(v)!;
    if (a.nanos < 0n) out.push(invalidRendered(at, JSON.stringify(amountText(a)), 'must be greater than or equal to 0'));
    if ((INTEGER_RESOURCES.has(k) || isExtendedResourceName(k)) && a.nanos % 1_000_000_000n !== 0n) out.push(invalidRendered(at, JSON.stringify(amountText(a)), 'must be an integer'));
  }
  return out;
}

function goScopes(scopes: unknown[]): string {
  return `[]core.ResourceQuotaScope{${scopes.map((s) => JSON.stringify(str(s))).join(', ')}}`;
}

function validateScopes(spec: Record<string, unknown>, hard: string[]): StatusCause[] {
  const scopes = arr(spec.scopes);
  if (scopes.length === 0) return [];
  const out: StatusCause[] = [];
  const rendered = goScopes(scopes);
  for (const s of scopes) {
    if (!QUOTA_SCOPES.includes(str(s))) out.push(invalidRendered('spec.scopes', rendered, 'unsupported scope'));
    for (const k of [...hard].sort()) if (isStandardQuotaResource(k) && !scopeValidFor(str(s), k)) out.push(invalidRendered('spec.scopes', rendered, 'unsupported scope applied to resource'));
  }
  const set = new Set(scopes.map(str));
  for (const pair of CONFLICTING_SCOPES) if (pair.every((s) => set.has(s))) out.push(invalidRendered('spec.scopes', rendered, 'conflicting scopes'));
  return out;
}

function validateScopeSelector(spec: Record<string, unknown>, hard: string[]): StatusCause[] {
  if (!isObject(spec.scopeSelector)) return [];
  const out: StatusCause[] = [];
  const path = 'spec.scopeSelector.matchExpressions';
  const seen = new Set<string>();
  for (const e of arr(spec.scopeSelector.matchExpressions)) {
    const req = obj(e);
    const scope = str(req.scopeName);
    const op = str(req.operator);
    const values = arr(req.values);
    if (!QUOTA_SCOPES.includes(scope)) out.push(field.invalid(`${path}.scopeName`, scope, 'unsupported scope'));
    for (const k of [...hard].sort()) if (isStandardQuotaResource(k) && !scopeValidFor(scope, k)) out.push(invalidRendered(path, JSON.stringify(spec.scopeSelector), 'unsupported scope applied to resource'));
    if (EXISTS_ONLY_SCOPES.has(scope) && op !== 'Exists') {
      out.push(
        field.invalid(
          `${path}.operator`,
          op,
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    }
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) out.push(field.required(`${path}.values`, "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) out.push(invalidRendered(`${path}.values`, `[]string{${values.map((v) => JSON.stringify(str(v))).join(', ')}}`, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"));
    } else {
      out.push(field.invalid(`${path}.operator`, op, 'not a valid selector operator'));
    }
    seen.add(scope);
  }
  for (const pair of CONFLICTING_SCOPES) if (pair.every((s) => seen.has(s))) out.push(invalidRendered(path, goScopes(arr(spec.scopes)), 'conflicting scopes'));
  return out;
}

function validateResourceQuota(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, true, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  const hard = Object.keys(obj(spec.hard));
  out.push(...validateAmounts(spec.hard, 'spec.hard'));
  out.push(...validateScopes(spec, hard));
  out.push(...validateScopeSelector(spec, hard));
  if (old) {
    const before = new Set(arr(obj(old.spec).scopes).map(str));
    const after = new Set(arr(spec.scopes).map(str));
    if (before.size !== after.size || [...after].some((s) => !before.has(s))) out.push(invalidRendered('spec.scopes', goScopes(arr(spec.scopes)), 'field is immutable'));
  }
  return out;
}

function validateResourceQuotaStatus(o: KubeObject, old: KubeObject): StatusCause[] {
  const out = validateObjectMetaUpdate(o.metadata, old.metadata);
  const status = obj(o.status);
  out.push(...validateAmounts(status.hard, 'status.hard'));
  out.push(...validateAmounts(status.used, 'status.used'));
  return out;
}

/** "name: used/hard" for each resource, requests and the rest in one cell, limits.* in the other. */
function usageCells(o: KubeObject): [string, string] {
  const status = obj(o.status);
  const hard = resourceList(status.hard);
  const used = resourceList(status.used);
  const request: string[] = [];
  const limit: string[] = [];
  for (const name of [...hard.keys()].sort()) {
    const cell = `${name}: ${amountText(used.get(name) ?? { nanos: 0n, format: 'DecimalSI' })}/${amountText(hard.get(name)!)}`;
    const parts = name.split('.');
    (parts.length > 1 && parts[0] === 'limits' ? limit : request).push(cell);
  }
  return [request.join(', '), limit.join(', ')];
}

export const resourceQuotaResource: ResourceType = {
  group: '',
  version: 'v1',
  resource: 'resourcequotas',
  kind: 'ResourceQuota',
  listKind: 'ResourceQuotaList',
  singular: 'resourcequota',
  namespaced: true,
  shortNames: ['quota'],
  categories: [],
  subresources: ['status'],
  fieldSelectors: {},
  table: {
    columns: [
      nameColumn,
      column('Age', 'string', 'CreationTimestamp is a timestamp representing the server time when this object was created.'),
      column('Request', 'string', 'Request represents a minimum amount of cpu/memory that a container may consume.'),
      column('Limit', 'string', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.'),
    ],
    cells: (o, now) => [o.metadata?.name ?? '', age(o, now), ...usageCells(o)],
  },
  hasGeneration: false,
  defaults: () => {},
  validate: validateResourceQuota,
  validateStatusUpdate: validateResourceQuotaStatus,
  // A new quota is counted by its controller: whatever status the client sent is dropped.
  prepareForCreate: (o) => {
    o.status = {};
  },
};
