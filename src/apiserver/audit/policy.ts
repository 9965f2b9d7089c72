// The audit policy (`--audit-policy-file`): upstream's audit.k8s.io/v1 Policy, read from YAML,
// checked as kube-apiserver checks it at start, and asked for each request's level: the first rule
// that matches decides, and no match means None.
import { readFileSync } from 'node:fs';
import { yaml } from '../../util/lazy-yaml.js';
import { isDNS1123Subdomain } from '../../api/validation.js';
import { field } from '../../api/errors.js';
import type { StatusCause } from '../../api/types.js';
import { authorizationScope, type RequestInfo } from '../http/request-info.js';
import type { UserInfo } from '../request-context.js';

export const AUDIT_API_VERSION = 'audit.k8s.io/v1';

export const LEVELS = ['None', 'Metadata', 'Request', 'RequestResponse'] as const;
export type Level = (typeof LEVELS)[number];

export const STAGES = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'] as const;
export type Stage = (typeof STAGES)[number];

export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

export interface PolicyRule {
  level: Level;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

export interface Policy {
  apiVersion: string;
  kind: 'Policy';
  rules: PolicyRule[];
  omitStages?: Stage[];
  omitManagedFields?: boolean;
}

/** What a request is audited at: its level, the stages left out, and whether managedFields are dropped. */
export interface AuditDecision {
  level: Level;
  omitStages: ReadonlySet<Stage>;
  omitManagedFields: boolean;
}

/** What a rule is matched against: the authenticated user (before impersonation, as upstream) and the request. */
export interface AuditAttributes {
  user: UserInfo | undefined;
  info: RequestInfo;
}

/** Levels in order, so "at least Request" is one comparison. */
export function levelAtLeast(level: Level, min: Level): boolean {
  return LEVELS.indexOf(level) >= LEVELS.indexOf(min);
}

/** A policy that cannot be used, with the field that is wrong ("rules[2].level: ..."). */
export class AuditPolicyError extends Error {
  /** A field error in apimachinery's wording, as kube-apiserver prints it. */
  static of(cause: StatusCause): AuditPolicyError {
    return new AuditPolicyError(`${cause.field}: ${cause.message}`);
  }
}

/**
 * Reads and checks a policy file. Upstream also reads the deprecated v1beta1 and v1alpha1; they
 * were removed from kube-apiserver in 1.24 and are refused here with that said.
 */
export function loadPolicyFile(path: string): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new AuditPolicyError(`cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return parsePolicy(text);
}

export function parsePolicy(text: string): Policy {
  let doc: unknown;
  try {
    doc = yaml().parse(text);
  } catch (e) {
    throw new AuditPolicyError(`not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!isRecord(doc)) throw new AuditPolicyError(`expected an ${AUDIT_API_VERSION} Policy object`);
  if (doc.kind !== 'Policy') throw new AuditPolicyError(`kind: expected "Policy", got ${JSON.stringify(doc.kind ?? '')}`);
  if (doc.apiVersion !== AUDIT_API_VERSION) {
    const old = doc.apiVersion === 'audit.k8s.io/v1beta1' || doc.apiVersion === 'audit.k8s.io/v1alpha1';
    throw new AuditPolicyError(`apiVersion: ${JSON.stringify(doc.apiVersion ?? '')} is not supported${old ? ' any more' : ''}; use "${AUDIT_API_VERSION}"`);
  }
  const known = new Set(['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields']);
  unknownFields(doc, known, '');
  const policy: Policy = { apiVersion: AUDIT_API_VERSION, kind: 'Policy', rules: [] };
  if (doc.omitStages !== undefined) policy.omitStages = stageList(doc.omitStages, 'omitStages');
  if (doc.omitManagedFields !== undefined) policy.omitManagedFields = bool(doc.omitManagedFields, 'omitManagedFields');
  if (doc.rules !== undefined && doc.rules !== null) {
    if (!Array.isArray(doc.rules)) throw new AuditPolicyError('rules: expected a list');
    policy.rules = doc.rules.map((r, i) => rule(r, `rules[${i}]`));
  }
  if (policy.rules.length === 0) throw new AuditPolicyError('loaded illegal policy with 0 rules');
  return policy;
}

function rule(value: unknown, path: string): PolicyRule {
  if (!isRecord(value)) throw new AuditPolicyError(`${path}: expected an object`);
  unknownFields(value, RULE_FIELDS, `${path}.`);
  const level = value.level;
  if (level === undefined || level === '') throw AuditPolicyError.of(field.required(`${path}.level`));
  if (!(LEVELS as readonly unknown[]).includes(level)) throw AuditPolicyError.of(field.notSupported(`${path}.level`, level, [...LEVELS]));
  const out: PolicyRule = { level: level as Level };
  for (const field of ['users', 'userGroups', 'verbs', 'namespaces'] as const) {
    if (value[field] !== undefined) out[field] = strings(value[field], `${path}.${field}`);
  }
  if (value.nonResourceURLs !== undefined) {
    const urls = strings(value.nonResourceURLs, `${path}.nonResourceURLs`);
    urls.forEach((url, i) => {
      if (url === '*') return;
      const invalid = (detail: string) => AuditPolicyError.of(field.invalid(`${path}.nonResourceURLs[${i}]`, url, detail));
      if (!url.startsWith('/')) throw invalid("non-resource URL rules must begin with a '/' character");
      if (url.slice(0, -1).includes('*')) throw invalid("non-resource URL wildcards '*' must be the final character of the rule");
    });
    out.nonResourceURLs = urls;
  }
  if (value.resources !== undefined) {
    if (!Array.isArray(value.resources)) throw new AuditPolicyError(`${path}.resources: expected a list`);
    out.resources = value.resources.map((gr, i) => groupResources(gr, `${path}.resources[${i}]`));
  }
  if (out.nonResourceURLs?.length && (out.resources?.length || out.namespaces?.length)) {
    throw new AuditPolicyError(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
  }
  if (value.omitStages !== undefined) out.omitStages = stageList(value.omitStages, `${path}.omitStages`);
  if (value.omitManagedFields !== undefined) out.omitManagedFields = bool(value.omitManagedFields, `${path}.omitManagedFields`);
  return out;
}

const RULE_FIELDS = new Set(['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields']);

function groupResources(value: unknown, path: string): GroupResources {
  if (!isRecord(value)) throw new AuditPolicyError(`${path}: expected an object`);
  unknownFields(value, new Set(['group', 'resources', 'resourceNames']), `${path}.`);
  const out: GroupResources = {};
  if (value.group !== undefined && value.group !== null) {
    if (typeof value.group !== 'string') throw new AuditPolicyError(`${path}.group: expected a string`);
    // "apps/v1" is a common slip: a group, never a group and version.
    const problems = value.group === '' ? [] : isDNS1123Subdomain(value.group);
    if (problems.length > 0) throw AuditPolicyError.of(field.invalid(`${path}.group`, value.group, problems.join(',')));
    out.group = value.group;
  }
  if (value.resources !== undefined) out.resources = strings(value.resources, `${path}.resources`);
  if (value.resourceNames !== undefined) out.resourceNames = strings(value.resourceNames, `${path}.resourceNames`);
  if (out.resourceNames?.length && !out.resources?.length) throw new AuditPolicyError(`${path}.resourceNames: Invalid value: using resourceNames requires at least one resource`);
  return out;
}

function stageList(value: unknown, path: string): Stage[] {
  const list = strings(value, path);
  list.forEach((s, i) => {
    if (!(STAGES as readonly string[]).includes(s)) throw AuditPolicyError.of(field.invalid(`${path}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`));
  });
  return list as Stage[];
}

function strings(value: unknown, path: string): string[] {
  if (value === null) return [];
  if (!Array.isArray(value)) throw new AuditPolicyError(`${path}: expected a list of strings`);
  value.forEach((v, i) => {
    if (typeof v !== 'string') throw new AuditPolicyError(`${path}[${i}]: expected a string, got ${JSON.stringify(v)}`);
  });
  return value as string[];
}

function bool(value: unknown, path: string): boolean {
  if (typeof value !== 'boolean') throw new AuditPolicyError(`${path}: expected true or false`);
  return value;
}

/** Upstream decodes strictly enough that a misspelt field ("verb:") is not silently a rule for everything. */
function unknownFields(value: Record<string, unknown>, known: ReadonlySet<string>, prefix: string): void {
  for (const k of Object.keys(value)) if (!known.has(k)) throw new AuditPolicyError(`${prefix}${k}: unknown field`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The policy in the form asked on every request: each rule's stages already joined with the policy's. */
export class PolicyChecker {
  private readonly rules: { rule: PolicyRule; decision: AuditDecision }[];
  private readonly fallback: AuditDecision;

  constructor(policy: Policy) {
    const omitted = (own: readonly Stage[] | undefined): ReadonlySet<Stage> => new Set([...(policy.omitStages ?? []), ...(own ?? [])]);
    this.rules = policy.rules.map((rule) => ({
      rule,
      decision: { level: rule.level, omitStages: omitted(rule.omitStages), omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields ?? false },
    }));
    this.fallback = { level: 'None', omitStages: omitted(undefined), omitManagedFields: policy.omitManagedFields ?? false };
  }

  decide(attrs: AuditAttributes): AuditDecision {
    for (const r of this.rules) if (ruleMatches(r.rule, attrs)) return r.decision;
    return this.fallback;
  }
}

function ruleMatches(r: PolicyRule, { user, info }: AuditAttributes): boolean {
  if (r.users?.length && (!user || !r.users.includes(user.name))) return false;
  if (r.userGroups?.length && (!user || !user.groups.some((g) => r.userGroups!.includes(g)))) return false;
  if (r.verbs?.length && !r.verbs.includes(info.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return resourceMatches(r, info);
  if (r.nonResourceURLs?.length) return info.kind === 'nonresource' && r.nonResourceURLs.some((spec) => pathMatches(info.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function resourceMatches(r: PolicyRule, info: RequestInfo): boolean {
  if (info.kind !== 'resource') return false;
  // The name and namespace as authorization sees them: a Namespace is in itself, a list narrowed to one name names it.
  const { name = '', namespace = '' } = authorizationScope(info);
  // Cluster-scoped requests have the namespace "", which a rule names to match them.
  if (r.namespaces?.length && !r.namespaces.includes(namespace)) return false;
  if (!r.resources?.length) return true;
  const sub = info.subresource ?? '';
  const combined = sub ? `${info.resource}/${sub}` : info.resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== info.group) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === '*' || res === combined) return true;
      if (sub && res.startsWith('*/') && res.slice(2) === sub) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === info.resource) return true;
    }
  }
  return false;
}
