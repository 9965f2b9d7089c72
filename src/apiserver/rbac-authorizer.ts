// RBAC authorization, as upstream's RBAC authorizer decides: a request is allowed when a
// ClusterRoleBinding, or a RoleBinding in the request's namespace, names the user (or one of its
// groups, or its service account) and the role it points at has a rule matching the request.
// Nothing is denied explicitly; when no rule allows a request the next authorizer is asked.
// Roles and bindings are read from this server's watch caches, so a decision costs no I/O.
import type { Binding, PolicyRule, RoleLike } from '../api/kinds/rbac.js';
import { isObject, objArr, str } from '../api/kinds/json.js';
import { ruleAllows, subjectMatches, type RbacRequest, type RbacUser } from '../api/rbac-rules.js';
import { NO_RULE, type Authorizer } from './auth.js';
import { authorizationScope, type RequestInfo } from './http/request-info.js';
import type { UserInfo } from './request-context.js';

/** Where the authorizer reads roles and bindings from (the watch caches, or fixtures in tests). */
export interface RbacObjects {
  clusterRoleBindings(): readonly Binding[];
  roleBindings(namespace: string): readonly Binding[];
  clusterRole(name: string): RoleLike | undefined;
  role(namespace: string, name: string): RoleLike | undefined;
}

export function rbacRequestOf(info: RequestInfo): RbacRequest {
  if (info.kind === 'nonresource') return { kind: 'nonresource', verb: info.verb, path: info.path };
  return {
    kind: 'resource',
    verb: info.verb,
    group: info.group,
    resource: info.resource,
    ...(info.subresource !== undefined ? { subresource: info.subresource } : {}),
    ...authorizationScope(info),
  };
}

export class RbacAuthorizer implements Authorizer {
  constructor(
    private readonly objects: RbacObjects,
    private readonly next?: Authorizer,
  ) {}

  async authorize(user: UserInfo, info: RequestInfo): Promise<string | undefined> {
    if (this.allows(user, rbacRequestOf(info))) return undefined;
    return this.next ? this.next.authorize(user, info) : NO_RULE;
  }

  /** Whether some binding grants the request; stops at the first rule that does. */
  allows(user: RbacUser, req: RbacRequest): boolean {
    const namespace = req.kind === 'resource' ? req.namespace : undefined;
    let found = false;
    this.visitRules(user, namespace, (rule) => (found = ruleAllows(rule, req)));
    return found;
  }

  /**
   * Every rule that applies to `user` in `namespace` (cluster-wide rules only when it is
   * undefined): what `kubectl auth can-i --list` shows, and what a user may grant to others.
   */
  rulesFor(user: RbacUser, namespace: string | undefined): PolicyRule[] {
    const out: PolicyRule[] = [];
    this.visitRules(user, namespace, (rule) => {
      out.push(rule);
      return false;
    });
    return out;
  }

  /** The rules of a role a binding refers to, or undefined when it does not exist (yet). */
  roleRules(roleRef: unknown, bindingNamespace: string | undefined): PolicyRule[] | undefined {
    if (!isObject(roleRef)) return undefined;
    const name = str(roleRef.name);
    const role =
      roleRef.kind === 'ClusterRole' ? this.objects.clusterRole(name) : roleRef.kind === 'Role' && bindingNamespace ? this.objects.role(bindingNamespace, name) : undefined;
    return role ? (objArr(role.rules) as unknown as PolicyRule[]) : undefined;
  }

  /** Calls `visit` with each rule granted to `user`, cluster bindings first, until it returns true. */
  private visitRules(user: RbacUser, namespace: string | undefined, visit: (rule: PolicyRule) => boolean): void {
    const fromBindings = (bindings: readonly Binding[], bindingNamespace: string | undefined): boolean => {
      for (const b of bindings) {
        if (!objArr(b.subjects).some((s) => subjectMatches(s, user, bindingNamespace))) continue;
        const rules = this.roleRules(b.roleRef, bindingNamespace) ?? [];
        for (const rule of rules) if (visit(rule)) return true;
      }
      return false;
    };
    if (fromBindings(this.objects.clusterRoleBindings(), undefined)) return;
    if (namespace) fromBindings(this.objects.roleBindings(namespace), namespace);
  }
}
