// What RBAC rules allow, as upstream's RBAC authorizer reads them: which subjects a binding names,
// whether a rule matches a request, and whether one set of rules covers another (the check that
// keeps a user from granting, through a Role or a binding, more than they hold themselves).
// Pure functions over stored objects, which may carry any shape: nothing here throws on them.
import type { PolicyRule } from './kinds/rbac.js';
import { arr, isObject, str } from './kinds/json.js';

/** What is being asked, for a resource (verb on group/resource[/subresource]) or a URL path. */
export type RbacRequest =
  | { kind: 'resource'; verb: string; group: string; resource: string; subresource?: string; name?: string; namespace?: string }
  | { kind: 'nonresource'; verb: string; path: string };

export interface RbacUser {
  name: string;
  groups: readonly string[];
}

const ALL = '*';
const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

export function serviceAccountUsername(namespace: string, name: string): string {
  return `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`;
}

function strings(v: unknown): string[] {
  return arr(v).filter((s): s is string => typeof s === 'string');
}

/**
 * Whether a binding's subject is `user`. A ServiceAccount subject without a namespace means the
 * binding's own namespace (a RoleBinding's; ClusterRoleBindings must name one).
 */
export function subjectMatches(subject: unknown, user: RbacUser, bindingNamespace: string | undefined): boolean {
  if (!isObject(subject)) return false;
  const name = str(subject.name);
  switch (subject.kind) {
    case 'User':
      return name === user.name;
    case 'Group':
      return user.groups.includes(name);
    case 'ServiceAccount': {
      const ns = str(subject.namespace) || bindingNamespace;
      return ns !== undefined && ns !== '' && user.name === serviceAccountUsername(ns, name);
    }
    default:
      return false;
  }
}

/** A rule's resources cover `resource[/subresource]`: "*", the exact name, or "*\/subresource". */
function resourceMatches(ruleResources: string[], resource: string, subresource: string | undefined): boolean {
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const r of ruleResources) {
    if (r === ALL || r === combined) return true;
    if (subresource && r === `*/${subresource}`) return true;
  }
  return false;
}

/** A rule's URLs cover `path`: "*", the exact path, or a prefix ending in "*". */
function pathMatches(ruleUrls: string[], path: string): boolean {
  for (const u of ruleUrls) {
    if (u === ALL || u === path) return true;
    if (u.endsWith(ALL) && path.startsWith(u.slice(0, -1))) return true;
  }
  return false;
}

function hasOrAll(list: string[], v: string): boolean {
  return list.includes(ALL) || list.includes(v);
}

/** Whether one rule allows the request. */
export function ruleAllows(rule: unknown, req: RbacRequest): boolean {
  if (!isObject(rule)) return false;
  if (!hasOrAll(strings(rule.verbs), req.verb)) return false;
  if (req.kind === 'nonresource') return pathMatches(strings(rule.nonResourceURLs), req.path);
  if (!hasOrAll(strings(rule.apiGroups), req.group)) return false;
  if (!resourceMatches(strings(rule.resources), req.resource, req.subresource)) return false;
  const names = strings(rule.resourceNames);
  return names.length === 0 || (req.name !== undefined && names.includes(req.name));
}

// ---- covering: does one user's set of rules include everything in another's -------------------

/** One verb on one resource of one group (and one name, if any), or one verb on one URL. */
function breakdown(rule: unknown): PolicyRule[] {
  if (!isObject(rule)) return [];
  const verbs = strings(rule.verbs);
  const out: PolicyRule[] = [];
  const names = strings(rule.resourceNames);
  for (const group of strings(rule.apiGroups)) {
    for (const resource of strings(rule.resources)) {
      for (const verb of verbs) {
        if (names.length === 0) out.push({ verbs: [verb], apiGroups: [group], resources: [resource] });
        else for (const name of names) out.push({ verbs: [verb], apiGroups: [group], resources: [resource], resourceNames: [name] });
      }
    }
  }
  for (const url of strings(rule.nonResourceURLs)) for (const verb of verbs) out.push({ verbs: [verb], nonResourceURLs: [url] });
  return out;
}

function resourcesCovered(owner: string[], servant: string[]): boolean {
  if (owner.includes(ALL)) return true;
  return servant.every((r) => {
    if (owner.includes(r)) return true;
    const slash = r.indexOf('/');
    return slash >= 0 && owner.includes(`*/${r.slice(slash + 1)}`);
  });
}

function urlsCovered(owner: string[], servant: string[]): boolean {
  return servant.every((u) => pathMatches(owner, u) || (u.endsWith(ALL) && owner.some((o) => o.endsWith(ALL) && u.startsWith(o.slice(0, -1)))));
}

function ruleCovers(owner: unknown, servant: PolicyRule): boolean {
  if (!isObject(owner)) return false;
  const verbs = strings(owner.verbs);
  if (!verbs.includes(ALL) && !servant.verbs.every((v) => verbs.includes(v))) return false;
  if (servant.nonResourceURLs) return urlsCovered(strings(owner.nonResourceURLs), servant.nonResourceURLs);
  const groups = strings(owner.apiGroups);
  if (!groups.includes(ALL) && !(servant.apiGroups ?? []).every((g) => groups.includes(g))) return false;
  if (!resourcesCovered(strings(owner.resources), servant.resources ?? [])) return false;
  const ownerNames = strings(owner.resourceNames);
  if (ownerNames.length === 0) return true;
  const names = servant.resourceNames ?? [];
  return names.length > 0 && names.every((n) => ownerNames.includes(n));
}

/** The pieces of `servant` that no rule of `owner` covers; empty when `owner` holds all of it. */
export function uncoveredRules(owner: readonly unknown[], servant: readonly unknown[]): PolicyRule[] {
  const missing: PolicyRule[] = [];
  for (const rule of servant) for (const piece of breakdown(rule)) if (!owner.some((o) => ruleCovers(o, piece))) missing.push(piece);
  return missing;
}

/** A rule as upstream prints it in escalation refusals: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function describeRule(r: PolicyRule): string {
  const list = (v: string[]): string => `[${v.map((s) => JSON.stringify(s)).join(' ')}]`;
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${list(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${list(r.resources)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${list(r.resourceNames)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${list(r.nonResourceURLs)}`);
  parts.push(`Verbs:${list(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
