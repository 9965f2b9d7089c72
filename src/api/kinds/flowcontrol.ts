// flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration: the configuration of
// API Priority and Fairness. A FlowSchema sorts requests (by who asks and what for) into a
// priority level; a priority level's share of the server's concurrency, and how it queues, is a
// PriorityLevelConfiguration. Defaults and validation follow upstream's v1 API.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { indexPath, nameIsDNSSubdomain, validateMeta } from '../validation.js';
import { arr, isObject, obj, objArr, optNum, str } from './json.js';
import { age, ageColumn, column, nameColumn } from './printing.js';

export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  user?: { name: string };
  group?: { name: string };
  serviceAccount?: { namespace: string; name: string };
}

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchemaSpec {
  priorityLevelConfiguration: { name: string };
  matchingPrecedence?: number;
  distinguisherMethod?: { type: 'ByUser' | 'ByNamespace' };
  rules?: PolicyRulesWithSubjects[];
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface FlowSchema extends KubeObject {
  metadata: ObjectMeta;
  spec: FlowSchemaSpec;
  status?: { conditions?: Condition[] };
}

export interface QueuingConfiguration {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export interface LimitResponse {
  type: 'Queue' | 'Reject';
  queuing?: QueuingConfiguration;
}

export interface PriorityLevelConfigurationSpec {
  type: 'Exempt' | 'Limited';
  limited?: { nominalConcurrencyShares?: number; limitResponse: LimitResponse; lendablePercent?: number; borrowingLimitPercent?: number };
  exempt?: { nominalConcurrencyShares?: number; lendablePercent?: number };
}

export interface PriorityLevelConfiguration extends KubeObject {
  metadata: ObjectMeta;
  spec: PriorityLevelConfigurationSpec;
  status?: { conditions?: Condition[] };
}

/** Upstream's default matchingPrecedence, and the range allowed. */
export const DEFAULT_MATCHING_PRECEDENCE = 1000;
const MAX_MATCHING_PRECEDENCE = 10000;
const DISTINGUISHERS = ['ByUser', 'ByNamespace'];
const SUBJECT_KINDS = ['User', 'Group', 'ServiceAccount'];

function defaultFlowSchema(o: KubeObject): void {
  const spec = obj(o.spec);
  if (!isObject(o.spec)) return;
  if (spec.matchingPrecedence === undefined || spec.matchingPrecedence === 0) spec.matchingPrecedence = DEFAULT_MATCHING_PRECEDENCE;
}

function defaultPriorityLevel(o: KubeObject): void {
  if (!isObject(o.spec)) return;
  const spec = o.spec;
  if (spec.type === 'Limited' && isObject(spec.limited)) {
    const limited = spec.limited;
    // v1: an unset share count is 30; an explicit 0 stays (a "jail" level).
    if (limited.nominalConcurrencyShares === undefined || limited.nominalConcurrencyShares === null) limited.nominalConcurrencyShares = 30;
    if (limited.lendablePercent === undefined || limited.lendablePercent === null) limited.lendablePercent = 0;
    const response = obj(limited.limitResponse);
    if (response.type === 'Queue' && isObject(response.queuing)) {
      const q = response.queuing;
      if (!q.queues) q.queues = 64;
      if (!q.handSize) q.handSize = 8;
      if (!q.queueLengthLimit) q.queueLengthLimit = 50;
    }
  }
  if (spec.type === 'Exempt') {
    const exempt = isObject(spec.exempt) ? spec.exempt : (spec.exempt = {});
    if (exempt.nominalConcurrencyShares === undefined || exempt.nominalConcurrencyShares === null) exempt.nominalConcurrencyShares = 0;
    if (exempt.lendablePercent === undefined || exempt.lendablePercent === null) exempt.lendablePercent = 0;
  }
}

function nonEmptyList(v: unknown, path: string, what: string, out: StatusCause[]): string[] {
  const list = arr(v).map(str);
  if (list.length === 0) out.push(field.required(path, what));
  else if (list.includes('*') && list.length > 1) out.push(field.invalid(path, list, 'if \'*\' is present, must not specify other values'));
  return list;
}

function validateSubject(s: Record<string, unknown>, path: string, out: StatusCause[]): void {
  const kind = str(s.kind);
  if (!SUBJECT_KINDS.includes(kind)) {
    out.push(kind ? field.notSupported(`${path}.kind`, kind, SUBJECT_KINDS) : field.required(`${path}.kind`));
    return;
  }
  const member = kind === 'User' ? 'user' : kind === 'Group' ? 'group' : 'serviceAccount';
  const body = s[member];
  if (!isObject(body)) return void out.push(field.required(`${path}.${member}`, `${member} is required when subject kind is '${kind}'`));
  if (!str(body.name)) out.push(field.required(`${path}.${member}.name`, `name is required`));
  if (kind === 'ServiceAccount' && !str(body.namespace)) out.push(field.required(`${path}.serviceAccount.namespace`, 'must specify namespace for service account'));
  for (const other of ['user', 'group', 'serviceAccount']) {
    if (other !== member && s[other] !== undefined && s[other] !== null) out.push(field.forbidden(`${path}.${other}`, `${other} is forbidden when subject kind is not '${other === 'serviceAccount' ? 'ServiceAccount' : other === 'user' ? 'User' : 'Group'}'`));
  }
}

function validateFlowSchema(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  if (!str(obj(spec.priorityLevelConfiguration).name)) out.push(field.required('spec.priorityLevelConfiguration.name', 'must reference a priority level'));
  const precedence = optNum(spec.matchingPrecedence);
  if (precedence !== undefined && (precedence < 1 || precedence > MAX_MATCHING_PRECEDENCE)) {
    out.push(field.invalid('spec.matchingPrecedence', precedence, `must be between 1 and ${MAX_MATCHING_PRECEDENCE}, inclusive`));
  }
  if (spec.distinguisherMethod !== undefined && spec.distinguisherMethod !== null) {
    const type = str(obj(spec.distinguisherMethod).type);
    if (!DISTINGUISHERS.includes(type)) out.push(field.notSupported('spec.distinguisherMethod.type', type, DISTINGUISHERS));
  }
  objArr(spec.rules).forEach((rule, i) => {
    const path = indexPath('spec.rules', i);
    const subjects = objArr(rule.subjects);
    if (subjects.length === 0) out.push(field.required(`${path}.subjects`, 'subjects must contain at least one value'));
    subjects.forEach((s, j) => validateSubject(s, indexPath(`${path}.subjects`, j), out));
    const resourceRules = objArr(rule.resourceRules);
    const nonResourceRules = objArr(rule.nonResourceRules);
    if (resourceRules.length === 0 && nonResourceRules.length === 0) out.push(field.required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
    resourceRules.forEach((r, j) => {
      const rp = indexPath(`${path}.resourceRules`, j);
      nonEmptyList(r.verbs, `${rp}.verbs`, 'verbs must contain at least one value', out);
      nonEmptyList(r.apiGroups, `${rp}.apiGroups`, 'resource rules must supply at least one api group', out);
      nonEmptyList(r.resources, `${rp}.resources`, 'resource rules must supply at least one resource', out);
      if (arr(r.namespaces).length === 0 && r.clusterScope !== true) out.push(field.required(`${rp}.namespaces`, 'resource rules that are not cluster scoped must supply at least one namespace'));
    });
    nonResourceRules.forEach((r, j) => {
      const rp = indexPath(`${path}.nonResourceRules`, j);
      nonEmptyList(r.verbs, `${rp}.verbs`, 'verbs must contain at least one value', out);
      nonEmptyList(r.nonResourceURLs, `${rp}.nonResourceURLs`, 'nonResourceURLs must contain at least one value', out);
    });
  });
  return out;
}

function percent(v: unknown, path: string, out: StatusCause[]): void {
  const n = optNum(v);
  if (n !== undefined && (n < 0 || n > 100)) out.push(field.invalid(path, n, 'must be between 0 and 100, inclusive'));
}

function validatePriorityLevel(o: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const out = validateMeta(o, old, false, nameIsDNSSubdomain);
  const spec = obj(o.spec);
  const type = str(spec.type);
  if (type !== 'Exempt' && type !== 'Limited') return [...out, type ? field.notSupported('spec.type', type, ['Exempt', 'Limited']) : field.required('spec.type', 'must be one of Exempt, Limited')];
  if (type === 'Exempt') {
    if (spec.limited !== undefined && spec.limited !== null) out.push(field.forbidden('spec.limited', 'must be nil if the type is not Limited'));
    const exempt = obj(spec.exempt);
    const ncs = optNum(exempt.nominalConcurrencyShares);
    if (ncs !== undefined && ncs < 0) out.push(field.invalid('spec.exempt.nominalConcurrencyShares', ncs, 'must be a non-negative integer'));
    percent(exempt.lendablePercent, 'spec.exempt.lendablePercent', out);
    return out;
  }
  if (spec.exempt !== undefined && spec.exempt !== null) out.push(field.forbidden('spec.exempt', 'must be nil if the type is Limited'));
  if (!isObject(spec.limited)) return [...out, field.required('spec.limited', 'must not be empty when type is Limited')];
  const limited = spec.limited;
  const ncs = optNum(limited.nominalConcurrencyShares);
  if (ncs !== undefined && ncs < 0) out.push(field.invalid('spec.limited.nominalConcurrencyShares', ncs, 'must be a non-negative integer'));
  percent(limited.lendablePercent, 'spec.limited.lendablePercent', out);
  const borrowing = optNum(limited.borrowingLimitPercent);
  if (borrowing !== undefined && borrowing < 0) out.push(field.invalid('spec.limited.borrowingLimitPercent', borrowing, 'if specified, must be a non-negative integer'));
  const response = obj(limited.limitResponse);
  const rtype = str(response.type);
  if (rtype !== 'Queue' && rtype !== 'Reject') return [...out, rtype ? field.notSupported('spec.limited.limitResponse.type', rtype, ['Queue', 'Reject']) : field.required('spec.limited.limitResponse.type', 'must be one of Queue, Reject')];
  if (rtype === 'Reject') {
    if (response.queuing !== undefined && response.queuing !== null) out.push(field.forbidden('spec.limited.limitResponse.queuing', 'must be nil if limited.limitResponse.type is not Limited'));
    return out;
  }
  if (!isObject(response.queuing)) return [...out, field.required('spec.limited.limitResponse.queuing', 'must not be empty if limited.limitResponse.type is Limited')];
  const q = response.queuing;
  const qp = 'spec.limited.limitResponse.queuing';
  const queues = optNum(q.queues) ?? 0;
  const handSize = optNum(q.handSize) ?? 0;
  if (queues <= 0) out.push(field.invalid(`${qp}.queues`, queues, 'must be positive'));
  if (optNum(q.queueLengthLimit) !== undefined && (optNum(q.queueLengthLimit) ?? 0) <= 0) out.push(field.invalid(`${qp}.queueLengthLimit`, q.queueLengthLimit, 'must be positive'));
  if (handSize <= 0) out.push(field.invalid(`${qp}.handSize`, handSize, 'must be positive'));
  else if (handSize > queues) out.push(field.invalid(`${qp}.handSize`, handSize, `should not be greater than queues (${queues})`));
  return out;
}

function conditionStatus(o: KubeObject, type: string): string {
  const c = objArr(obj(o.status).conditions).find((x) => x.type === type);
  return c ? str(c.status) : '?';
}

/**
 * A cluster-scoped kind of the group with a status subresource. (Its status on create is dropped
 * by the object store, as for every kind with a status subresource.)
 */
function flowcontrolType(kind: string, table: ResourceType['table'], defaults: ResourceType['defaults'], validate: ResourceType['validate']): ResourceType {
  const singular = kind.toLowerCase();
  return {
    group: FLOWCONTROL_GROUP,
    version: 'v1',
    resource: `${singular}s`,
    kind,
    listKind: `${kind}List`,
    singular,
    namespaced: false,
    shortNames: [],
    categories: [],
    subresources: ['status'],
    fieldSelectors: {},
    table,
    hasGeneration: true,
    defaults,
    validate,
  };
}

export const flowSchemaResource = flowcontrolType(
  'FlowSchema',
  {
    columns: [
      nameColumn,
      column('PriorityLevel', 'string', 'The priority level requests of this schema go to.'),
      column('MatchingPrecedence', 'string', 'The lower, the earlier this schema is tried.'),
      column('DistinguisherMethod', 'string', 'What tells one flow of this schema from another.'),
      ageColumn,
      column('MissingPL', 'string', 'Whether the priority level it names is missing.'),
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const dm = obj(spec.distinguisherMethod);
      return [o.metadata?.name ?? '', str(obj(spec.priorityLevelConfiguration).name), String(optNum(spec.matchingPrecedence) ?? ''), str(dm.type) || '<none>', age(o, now), conditionStatus(o, 'Dangling')];
    },
  },
  defaultFlowSchema,
  validateFlowSchema,
);

export const priorityLevelConfigurationResource = flowcontrolType(
  'PriorityLevelConfiguration',
  {
    columns: [
      nameColumn,
      column('Type', 'string', 'Exempt or Limited.'),
      column('NominalConcurrencyShares', 'string', "Its share of the server's concurrency."),
      column('Queues', 'string', 'Queues its waiting requests are shuffle-sharded into.'),
      column('HandSize', 'string', 'Queues one flow may use.'),
      column('QueueLengthLimit', 'string', 'Requests one queue may hold.'),
      ageColumn,
    ],
    cells(o, now) {
      const spec = obj(o.spec);
      const limited = obj(spec.limited);
      const queuing = obj(obj(limited.limitResponse).queuing);
      const q = (v: unknown): string => (optNum(v) === undefined ? '<none>' : String(v));
      const shares = spec.type === 'Limited' ? q(limited.nominalConcurrencyShares) : q(obj(spec.exempt).nominalConcurrencyShares);
      return [o.metadata?.name ?? '', str(spec.type), shares, q(queuing.queues), q(queuing.handSize), q(queuing.queueLengthLimit), age(o, now)];
    },
  },
  defaultPriorityLevel,
  validatePriorityLevel,
);
