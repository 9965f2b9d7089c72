// Which FlowSchema a request matches and which flow within it, as upstream's APF classifies: the
// schemas are tried by matchingPrecedence (then name), the first whose rules match wins, and its
// distinguisher (the user, or the namespace) tells the request's flow.
import type { FlowSchema, NonResourcePolicyRule, ResourcePolicyRule, Subject } from '../../api/kinds/flowcontrol.js';
import { DEFAULT_MATCHING_PRECEDENCE } from '../../api/kinds/flowcontrol.js';
import type { UserInfo } from '../../auth/user.js';
import { authorizationScope, type RequestInfo } from '../http/request-info.js';

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

/** The schemas in the order they are tried. */
export function orderFlowSchemas(schemas: readonly FlowSchema[]): FlowSchema[] {
  return [...schemas].sort((a, b) => precedence(a) - precedence(b) || (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
}

function precedence(fs: FlowSchema): number {
  return fs.spec?.matchingPrecedence ?? DEFAULT_MATCHING_PRECEDENCE;
}

function subjectMatches(s: Subject, user: UserInfo): boolean {
  switch (s.kind) {
    case 'User':
      return s.user?.name === '*' || s.user?.name === user.name;
    case 'Group':
      return s.group?.name === '*' || (s.group !== undefined && user.groups.includes(s.group.name));
    case 'ServiceAccount': {
      const sa = s.serviceAccount;
      if (!sa || !user.name.startsWith(SERVICE_ACCOUNT_PREFIX)) return false;
      const [namespace, name] = user.name.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
      return namespace === sa.namespace && (sa.name === '*' || sa.name === name);
    }
    default:
      return false;
  }
}

function listMatches(list: readonly string[] | null | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

function resourceRuleMatches(rule: ResourcePolicyRule, info: Extract<RequestInfo, { kind: 'resource' }>, namespace: string | undefined): boolean {
  if (!listMatches(rule.verbs, info.verb) || !listMatches(rule.apiGroups, info.group)) return false;
  const resource = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  if (!listMatches(rule.resources, resource)) return false;
  return namespace === undefined ? rule.clusterScope === true : listMatches(rule.namespaces, namespace);
}

function nonResourceRuleMatches(rule: NonResourcePolicyRule, info: Extract<RequestInfo, { kind: 'nonresource' }>): boolean {
  if (!listMatches(rule.verbs, info.verb)) return false;
  return (rule.nonResourceURLs ?? []).some((url) => url === '*' || url === info.path || (url.endsWith('*') && info.path.startsWith(url.slice(0, -1))));
}

/** The namespace a request is in, as flow schemas match it (a Namespace is in itself). */
export function requestNamespace(info: RequestInfo): string | undefined {
  return info.kind === 'resource' ? authorizationScope(info).namespace : undefined;
}

/** Whether a schema's rules take the request; `namespace` as requestNamespace gives it (computed once per request by callers trying many schemas). */
export function flowSchemaMatches(fs: FlowSchema, user: UserInfo, info: RequestInfo, namespace = requestNamespace(info)): boolean {
  for (const rule of fs.spec?.rules ?? []) {
    if (!(rule.subjects ?? []).some((s) => subjectMatches(s, user))) continue;
    if (info.kind === 'resource' ? (rule.resourceRules ?? []).some((r) => resourceRuleMatches(r, info, namespace)) : (rule.nonResourceRules ?? []).some((r) => nonResourceRuleMatches(r, info))) return true;
  }
  return false;
}

/** The request's flow within its schema: its user, its namespace, or one flow for all. */
export function flowDistinguisher(fs: FlowSchema, user: UserInfo, info: RequestInfo, namespace = requestNamespace(info)): string {
  switch (fs.spec?.distinguisherMethod?.type) {
    case 'ByUser':
      return user.name;
    case 'ByNamespace':
      return namespace ?? '';
    default:
      return '';
  }
}
