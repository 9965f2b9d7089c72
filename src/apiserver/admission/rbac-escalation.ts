// RBAC's escalation check, as upstream's role and binding storage makes it: a user may write a
// Role or ClusterRole only with rules they hold themselves (or the `escalate` verb on it), and a
// binding only to a role whose rules they hold (or the `bind` verb on it). Without it, anyone who
// may edit RoleBindings could bind themselves to cluster-admin.
import { isDeepStrictEqual } from 'node:util';
import { forbiddenObject, notFound } from '../../api/errors.js';
import { isObject, objArr, str } from '../../api/kinds/json.js';
import { RBAC_GROUP, type Binding, type RoleLike } from '../../api/kinds/rbac.js';
import type { KubeObject } from '../../api/types.js';
import { describeRule, uncoveredRules } from '../../api/rbac-rules.js';
import type { RbacAuthorizer } from '../rbac-authorizer.js';
import type { UserInfo } from '../request-context.js';
import type { AdmissionPlugin } from './plugin.js';

const ROLE_RESOURCES = new Set(['roles', 'clusterroles']);
const BINDING_RESOURCES = new Set(['rolebindings', 'clusterrolebindings']);

/** Everything a user must hold to set an aggregationRule, which can gather any rule. */
const FULL_AUTHORITY = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export function isRbacResource(group: string, resource: string): boolean {
  return group === RBAC_GROUP && (ROLE_RESOURCES.has(resource) || BINDING_RESOURCES.has(resource));
}

/** Fields a garbage collector or finalizer changes; an update that touches only these grants nothing. */
function grantingPart(o: KubeObject): unknown {
  const { ownerReferences: _o, finalizers: _f, managedFields: _m, resourceVersion: _r, generation: _g, ...meta } = o.metadata;
  return { ...o, metadata: meta };
}

/**
 * Throws Forbidden (or NotFound for a binding to a missing role) when `user` may not write `obj`
 * of this RBAC `resource`; `old` is the stored object on update.
 */
export function checkRbacEscalation(rbac: RbacAuthorizer, user: UserInfo, resource: string, obj: KubeObject, old: KubeObject | undefined): void {
  // Upstream lets system:masters past the check outright, so the bootstrap roles can be written.
  if (user.groups.includes('system:masters')) return;
  if (old && isDeepStrictEqual(grantingPart(obj), grantingPart(old))) return;
  const name = obj.metadata.name ?? '';
  const namespace = obj.metadata.namespace;
  const refuse = (why: string): never => {
    throw forbiddenObject(resource, RBAC_GROUP, name, why);
  };
  const notHeld = (servant: unknown[], ownerNamespace: string | undefined): void => {
    const missing = uncoveredRules(rbac.rulesFor(user, ownerNamespace), servant);
    if (missing.length === 0) return;
    const groups = `[${user.groups.map((g) => JSON.stringify(g)).join(' ')}]`;
    refuse(`user ${JSON.stringify(user.name)} (groups=${groups}) is attempting to grant RBAC permissions not currently held:\n${missing.map(describeRule).join('\n')}`);
  };

  if (ROLE_RESOURCES.has(resource)) {
    if (rbac.allows(user, { kind: 'resource', verb: 'escalate', group: RBAC_GROUP, resource, name, ...(namespace ? { namespace } : {}) })) return;
    if (resource === 'clusterroles' && isObject((obj as RoleLike & { aggregationRule?: unknown }).aggregationRule)) {
      if (uncoveredRules(rbac.rulesFor(user, undefined), FULL_AUTHORITY).length > 0) refuse('must have cluster-admin privileges to use the aggregationRule');
      return;
    }
    return notHeld(objArr((obj as RoleLike).rules), resource === 'roles' ? namespace : undefined);
  }

  if (BINDING_RESOURCES.has(resource)) {
    const ref = (obj as Binding).roleRef;
    if (!isObject(ref)) return; // validation refuses it
    const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
    const refName = str(ref.name);
    const bindNamespace = resource === 'rolebindings' ? namespace : undefined;
    if (rbac.allows(user, { kind: 'resource', verb: 'bind', group: RBAC_GROUP, resource: refResource, name: refName, ...(bindNamespace ? { namespace: bindNamespace } : {}) })) return;
    const rules = rbac.roleRules(ref, bindNamespace);
    if (!rules) throw notFound(refResource, RBAC_GROUP, refName);
    notHeld(rules, bindNamespace);
  }
}

/** The check as an admission plugin: in the mutating stage, so it refuses before validation runs, as upstream's RBAC storage does. */
export function rbacEscalation(rbac: RbacAuthorizer): AdmissionPlugin {
  return {
    name: 'RBACEscalation',
    handles: (op, rt) => op !== 'DELETE' && isRbacResource(rt.group, rt.resource),
    mutate: (a) => {
      if (a.object) checkRbacEscalation(rbac, a.user, a.resource.resource, a.object, a.oldObject);
    },
  };
}
