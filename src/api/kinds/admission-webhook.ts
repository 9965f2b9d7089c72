// What ValidatingWebhookConfiguration and MutatingWebhookConfiguration share (admissionregistration.k8s.io/v1):
// the webhook entry's fields, upstream's defaults for them and upstream's validation of them. The
// two kinds (./validatingwebhookconfiguration.ts, ./mutatingwebhookconfiguration.ts) add what is
// their own: the kind, and for the mutating one reinvocationPolicy.
import { field } from '../errors.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { validateLabelSelectorObject, type LabelSelectorObject } from '../labels.js';
import { childPath, indexPath, isDNS1123Subdomain, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { defaultWebhookClientConfig, validateReviewVersions, validateWebhookClientConfig, type WebhookClientConfig } from '../webhook-client-config.js';
import { arr, isObject, obj, objArr, optNum, str } from './json.js';
import { age, column, nameColumn } from './printing.js';
import type { TableConvertor } from '../resource.js';

export const ADMISSIONREGISTRATION_GROUP = 'admissionregistration.k8s.io';

export type OperationType = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*';

export interface Rule {
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

export interface RuleWithOperations extends Rule {
  operations?: OperationType[];
}

export interface AdmissionWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Ignore' | 'Fail';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  sideEffects?: 'None' | 'NoneOnDryRun' | 'Some' | 'Unknown';
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface WebhookConfiguration extends KubeObject {
  metadata: ObjectMeta;
  webhooks?: AdmissionWebhook[];
}

/** The AdmissionReview versions this server speaks, in upstream's order of preference. */
export const ADMISSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];
const NO_SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun'];
const SIDE_EFFECT_CLASSES = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
export const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];

/** Upstream's v1 defaults for one webhook entry (sideEffects and admissionReviewVersions have none: they are required). */
export function defaultWebhook(w: Record<string, unknown>, mutating: boolean): void {
  w.failurePolicy ??= 'Fail';
  w.matchPolicy ??= 'Equivalent';
  w.namespaceSelector ??= {};
  w.objectSelector ??= {};
  w.timeoutSeconds ??= 10;
  if (mutating) w.reinvocationPolicy ??= 'Never';
  for (const r of objArr(w.rules)) r.scope ??= '*';
  defaultWebhookClientConfig(w.clientConfig);
}

export function defaultWebhookConfiguration(o: KubeObject, mutating: boolean): void {
  for (const w of objArr(o.webhooks)) defaultWebhook(w, mutating);
}

const hasWildcard = (list: string[]): boolean => list.includes('*');

/** Upstream IsFullyQualifiedName: a DNS subdomain of at least three segments. */
function validateFullyQualifiedName(path: string, name: string): StatusCause[] {
  if (name === '') return [field.required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [field.invalid(path, name, errs.join(','))];
  if (name.split('.').length < 3) return [field.invalid(path, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** Upstream validateResources: resources and subresources, with wildcards that must not overlap. */
function validateResources(resources: string[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (resources.length === 0) out.push(field.required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  resources.forEach((resSub, i) => {
    if (resSub === '') return void out.push(field.required(indexPath(path, i)));
    if (resSub === '*/*') doubleWildcard = true;
    if (resSub === '*') singleWildcard = true;
    const slash = resSub.indexOf('/');
    if (slash < 0) {
      withoutSub = resSub !== '*';
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res)) out.push(field.invalid(indexPath(path, i), resSub, `if '${res}/*' is present, must not specify ${resSub}`));
    if (subWithWildcardRes.has(sub)) out.push(field.invalid(indexPath(path, i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) out.push(field.invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub) out.push(field.invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return out;
}

function validateRule(r: Record<string, unknown>, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const operations = arr(r.operations).map(str);
  if (operations.length === 0) out.push(field.required(childPath(path, 'operations')));
  if (operations.length > 1 && hasWildcard(operations)) out.push(field.invalid(childPath(path, 'operations'), operations, "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) out.push(field.notSupported(indexPath(childPath(path, 'operations'), i), op, OPERATIONS));
  });
  const groups = arr(r.apiGroups).map(str);
  if (groups.length === 0) out.push(field.required(childPath(path, 'apiGroups')));
  if (groups.length > 1 && hasWildcard(groups)) out.push(field.invalid(childPath(path, 'apiGroups'), groups, "if '*' is present, must not specify other API groups"));
  const versions = arr(r.apiVersions).map(str);
  if (versions.length === 0) out.push(field.required(childPath(path, 'apiVersions')));
  if (versions.length > 1 && hasWildcard(versions)) out.push(field.invalid(childPath(path, 'apiVersions'), versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') out.push(field.required(indexPath(childPath(path, 'apiVersions'), i)));
  });
  out.push(...validateResources(arr(r.resources).map(str), childPath(path, 'resources')));
  if (r.scope !== undefined && r.scope !== null && !SCOPES.includes(str(r.scope))) out.push(field.notSupported(childPath(path, 'scope'), r.scope, SCOPES));
  return out;
}

/** What upstream relaxes on update when the stored object already breaks a rule added later. */
interface ValidationOptions {
  requireNoSideEffects: boolean;
  requireRecognizedVersions: boolean;
  requireUniqueNames: boolean;
}

function validateWebhook(w: Record<string, unknown>, mutating: boolean, opts: ValidationOptions, path: string): StatusCause[] {
  const out = validateFullyQualifiedName(childPath(path, 'name'), str(w.name));
  objArr(w.rules).forEach((r, i) => out.push(...validateRule(r, indexPath(childPath(path, 'rules'), i))));
  if (w.failurePolicy !== undefined && !FAILURE_POLICIES.includes(str(w.failurePolicy))) out.push(field.notSupported(childPath(path, 'failurePolicy'), w.failurePolicy, FAILURE_POLICIES));
  if (w.matchPolicy !== undefined && !MATCH_POLICIES.includes(str(w.matchPolicy))) out.push(field.notSupported(childPath(path, 'matchPolicy'), w.matchPolicy, MATCH_POLICIES));
  const allowed = opts.requireNoSideEffects ? NO_SIDE_EFFECT_CLASSES : SIDE_EFFECT_CLASSES;
  if (w.sideEffects === undefined || w.sideEffects === null) out.push(field.required(childPath(path, 'sideEffects'), `must specify one of ${allowed.join(', ')}`));
  else if (!allowed.includes(str(w.sideEffects))) out.push(field.notSupported(childPath(path, 'sideEffects'), w.sideEffects, allowed));
  const timeout = optNum(w.timeoutSeconds);
  if (timeout !== undefined && (timeout > 30 || timeout < 1)) out.push(field.invalid(childPath(path, 'timeoutSeconds'), timeout, 'the timeout value must be between 1 and 30 seconds'));
  out.push(...validateLabelSelectorObject(w.namespaceSelector, childPath(path, 'namespaceSelector')));
  out.push(...validateLabelSelectorObject(w.objectSelector, childPath(path, 'objectSelector')));
  if (mutating && w.reinvocationPolicy !== undefined && !REINVOCATION_POLICIES.includes(str(w.reinvocationPolicy))) {
    out.push(field.notSupported(childPath(path, 'reinvocationPolicy'), w.reinvocationPolicy, REINVOCATION_POLICIES));
  }
  out.push(...validateWebhookClientConfig(childPath(path, 'clientConfig'), w.clientConfig));
  return out;
}

function optionsFor(old: KubeObject | undefined): ValidationOptions {
  if (!old) return { requireNoSideEffects: true, requireRecognizedVersions: true, requireUniqueNames: true };
  const hooks = objArr(old.webhooks);
  const names = hooks.map((w) => str(w.name));
  return {
    requireNoSideEffects: hooks.every((w) => NO_SIDE_EFFECT_CLASSES.includes(str(w.sideEffects))),
    requireRecognizedVersions: hooks.every((w) => {
      const versions = arr(w.admissionReviewVersions).map(str);
      return versions.length === 0 || versions.some((v) => ADMISSION_REVIEW_VERSIONS.includes(v));
    }),
    requireUniqueNames: new Set(names).size === names.length,
  };
}

/** Upstream Validate(Validating|Mutating)WebhookConfiguration and its update form. */
export function validateWebhookConfiguration(o: KubeObject, old: KubeObject | undefined, mutating: boolean): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const opts = optionsFor(old);
  const names = new Set<string>();
  if (o.webhooks !== undefined && o.webhooks !== null && !Array.isArray(o.webhooks)) return [...out, field.typeInvalid('webhooks', o.webhooks, 'must be a list')];
  arr(o.webhooks).forEach((entry, i) => {
    const path = indexPath('webhooks', i);
    const w = isObject(entry) ? entry : obj(entry);
    out.push(...validateWebhook(w, mutating, opts, path));
    out.push(...validateReviewVersions(childPath(path, 'admissionReviewVersions'), arr(w.admissionReviewVersions).map(str), ADMISSION_REVIEW_VERSIONS, opts.requireRecognizedVersions, `must specify one of ${ADMISSION_REVIEW_VERSIONS.join(', ')}`));
    const name = str(w.name);
    if (opts.requireUniqueNames && name !== '') {
      if (names.has(name)) out.push(field.duplicate(childPath(path, 'name'), name));
      names.add(name);
    }
  });
  return out;
}

/**
 * matchConditions are CEL, which this server does not evaluate: say so on every write that has
 * them, as a CRD's CEL rules are warned of, rather than call the webhook silently more often.
 */
export function matchConditionWarnings(o: KubeObject): string[] {
  const out: string[] = [];
  objArr(o.webhooks).forEach((w, i) => {
    if (arr(w.matchConditions).length > 0) out.push(`webhooks[${i}].matchConditions are not evaluated by this server (CEL): the webhook is called for every request its rules and selectors match`);
  });
  return out;
}

/** NAME, WEBHOOKS, AGE: upstream's columns for both kinds. */
export const webhookConfigurationTable: TableConvertor = {
  columns: [nameColumn, column('Webhooks', 'integer', 'Webhooks indicates the number of webhooks in the configuration'), column('Age', 'string', 'Time since the object was created.')],
  cells: (o, now) => [o.metadata?.name ?? '', arr(o.webhooks).length, age(o, now)],
};
