// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and ClusterRoleBinding, validated as
// upstream. What they grant is decided in src/api/rbac-rules.ts and src/apiserver/rbac-authorizer.ts.
import { field } from '../errors.js';
import type { ResourceType } from '../resource.js';
import type { KubeObject, ObjectMeta, StatusCause } from '../types.js';
import { childPath, indexPath, validateImmutable, validateMeta, type NameValidator } from '../validation.js';
import { arr, isObject, obj, objArr, str } from './json.js';
import { age, column, nameColumn } from './printing.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  apiGroup?: string;
  name: string;
  namespace?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

export interface RoleLike extends KubeObject {
  metadata: ObjectMeta;
  rules?: PolicyRule[];
}

export interface Binding extends KubeObject {
  metadata: ObjectMeta;
  subjects?: Subject[];
  roleRef?: RoleRef;
}

/** Upstream ValidateRBACName: any path segment name ("system:controller:x" is fine). */
const pathSegmentName: NameValidator = (name) => {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  for (const c of ['/', '%']) if (name.includes(c)) return [`may not contain '${c}'`];
  return [];
};

function validateRules(o: KubeObject, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  objArr((o as RoleLike).rules).forEach((r, i) => {
    const path = indexPath('rules', i);
    if (arr(r.verbs).length === 0) out.push(field.required(childPath(path, 'verbs'), 'verbs must contain at least one value'));
    const urls = arr(r.nonResourceURLs);
    if (urls.length > 0) {
      if (namespaced) out.push(field.invalid(childPath(path, 'nonResourceURLs'), urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (arr(r.apiGroups).length > 0 || arr(r.resources).length > 0 || arr(r.resourceNames).length > 0) {
        out.push(field.invalid(childPath(path, 'nonResourceURLs'), urls, 'rules cannot apply to both regular resources and non-resource URLs'));
      }
      return;
    }
    if (arr(r.apiGroups).length === 0) out.push(field.required(childPath(path, 'apiGroups'), 'resource rules must supply at least one api group'));
    if (arr(r.resources).length === 0) out.push(field.required(childPath(path, 'resources'), 'resource rules must supply at least one resource'));
  });
  return out;
}

function defaultSubjects(o: KubeObject): void {
  for (const s of objArr((o as Binding).subjects)) {
    if (s.apiGroup !== undefined) continue;
    if (s.kind === 'ServiceAccount') s.apiGroup = '';
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = RBAC_GROUP;
  }
}

function validateBinding(o: KubeObject, old: KubeObject | undefined, clusterScoped: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const ref = obj((o as Binding).roleRef);
  if (str(ref.apiGroup) !== RBAC_GROUP) out.push(field.notSupported('roleRef.apiGroup', str(ref.apiGroup), [RBAC_GROUP]));
  const kinds = clusterScoped ? ['ClusterRole'] : ['Role', 'ClusterRole'];
  if (!kinds.includes(str(ref.kind))) out.push(field.notSupported('roleRef.kind', str(ref.kind), kinds));
  if (!str(ref.name)) out.push(field.required('roleRef.name'));
  else out.push(...pathSegmentName(str(ref.name), false).map((m) => field.invalid('roleRef.name', str(ref.name), m)));
  objArr((o as Binding).subjects).forEach((s, i) => {
    const path = indexPath('subjects', i);
    const name = str(s.name);
    if (!name) out.push(field.required(childPath(path, 'name')));
    const apiGroup = str(s.apiGroup);
    switch (s.kind) {
      case 'ServiceAccount':
        if (apiGroup !== '') out.push(field.notSupported(childPath(path, 'apiGroup'), apiGroup, ['']));
        if (clusterScoped && !str(s.namespace)) out.push(field.required(childPath(path, 'namespace')));
        break;
      case 'User':
      case 'Group':
        if (apiGroup !== RBAC_GROUP) out.push(field.notSupported(childPath(path, 'apiGroup'), apiGroup, [RBAC_GROUP]));
        break;
      default:
        out.push(field.notSupported(childPath(path, 'kind'), str(s.kind), ['ServiceAccount', 'User', 'Group']));
    }
  });
  // Upstream's wording: a binding points at one role for life.
  if (old && isObject((old as Binding).roleRef) && validateImmutable(ref, (old as Binding).roleRef, 'roleRef').length > 0) {
    out.push(field.invalid('roleRef', ref, 'cannot change roleRef'));
  }
  return out;
}

/** "Role/admin" or "ClusterRole/view", as upstream's ROLE column prints a roleRef. */
function roleCell(o: KubeObject): string {
  const ref = obj((o as Binding).roleRef);
  return `${str(ref.kind)}/${str(ref.name)}`;
}

function subjectsOf(o: KubeObject, kind: string): string {
  return objArr((o as Binding).subjects)
    .filter((s) => s.kind === kind)
    .map((s) => (kind === 'ServiceAccount' ? `${str(s.namespace)}/${str(s.name)}` : str(s.name)))
    .join(', ');
}

/** Upstream prints roles with their creation time, not an age. */
function createdAt(o: KubeObject): string {
  return o.metadata?.creationTimestamp ?? '';
}

const roleTable: ResourceType['table'] = {
  columns: [nameColumn, column('Created At', 'date', 'CreationTimestamp is a timestamp representing the server time when this object was created.')],
  cells: (o) => [o.metadata?.name ?? '', createdAt(o)],
};

const bindingTable: ResourceType['table'] = {
  columns: [
    nameColumn,
    column('Role', 'string', 'RoleRef is the reference to the role the binding refers to.'),
    column('Age', 'string', 'Time since the object was created.'),
    column('Users', 'string', 'Users in the binding', 1),
    column('Groups', 'string', 'Groups in the binding', 1),
    column('ServiceAccounts', 'string', 'ServiceAccounts in the binding', 1),
  ],
  cells: (o, now) => [o.metadata?.name ?? '', roleCell(o), age(o, now), subjectsOf(o, 'User'), subjectsOf(o, 'Group'), subjectsOf(o, 'ServiceAccount')],
};

function rbacType(resource: string, kind: string, namespaced: boolean, table: ResourceType['table'], validate: ResourceType['validate'], defaults: ResourceType['defaults']): ResourceType {
  return {
    group: RBAC_GROUP,
    version: 'v1',
    resource,
    kind,
    listKind: `${kind}List`,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    subresources: [],
    fieldSelectors: {},
    table,
    hasGeneration: false,
    defaults,
    validate,
  };
}

const noDefaults = () => {};

export const roleResource = rbacType('roles', 'Role', true, roleTable, (o, old) => [...validateMeta(o, old, true, pathSegmentName), ...validateRules(o, true)], noDefaults);
export const clusterRoleResource = rbacType(
  'clusterroles',
  'ClusterRole',
  false,
  roleTable,
  (o, old) => [...validateMeta(o, old, false, pathSegmentName), ...validateRules(o, false)],
  noDefaults,
);
export const roleBindingResource = rbacType(
  'rolebindings',
  'RoleBinding',
  true,
  bindingTable,
  (o, old) => [...validateMeta(o, old, true, pathSegmentName), ...validateBinding(o, old, false)],
  defaultSubjects,
);
export const clusterRoleBindingResource = rbacType(
  'clusterrolebindings',
  'ClusterRoleBinding',
  false,
  bindingTable,
  (o, old) => [...validateMeta(o, old, false, pathSegmentName), ...validateBinding(o, old, true)],
  defaultSubjects,
);
