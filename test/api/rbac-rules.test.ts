import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeRule, ruleAllows, subjectMatches, uncoveredRules, type RbacRequest } from '../../src/api/rbac-rules.js';
import { RbacAuthorizer, type RbacObjects } from '../../src/apiserver/rbac-authorizer.js';
import type { Binding, RoleLike } from '../../src/api/kinds/rbac.js';

const res = (verb: string, group: string, resource: string, more: Partial<Extract<RbacRequest, { kind: 'resource' }>> = {}): RbacRequest => ({ kind: 'resource', verb, group, resource, ...more });

describe('RBAC rules', () => {
  it('match verbs, groups and resources exactly or by "*"', () => {
    const rule = { verbs: ['get', 'list'], apiGroups: ['', 'apps'], resources: ['pods', 'deployments'] };
    assert.equal(ruleAllows(rule, res('get', '', 'pods')), true);
    assert.equal(ruleAllows(rule, res('list', 'apps', 'deployments')), true);
    assert.equal(ruleAllows(rule, res('delete', '', 'pods')), false);
    assert.equal(ruleAllows(rule, res('get', 'batch', 'pods')), false);
    assert.equal(ruleAllows(rule, res('get', '', 'secrets')), false);
    assert.equal(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, res('escalate', 'rbac.authorization.k8s.io', 'roles')), true);
  });

  it('treat subresources as resources of their own, and "*/sub" as that subresource of anything', () => {
    const scale = { verbs: ['patch'], apiGroups: ['apps'], resources: ['deployments/scale'] };
    assert.equal(ruleAllows(scale, res('patch', 'apps', 'deployments', { subresource: 'scale' })), true);
    assert.equal(ruleAllows(scale, res('patch', 'apps', 'deployments')), false);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, res('get', '', 'pods', { subresource: 'log' })), false);
    const anyStatus = { verbs: ['update'], apiGroups: ['*'], resources: ['*/status'] };
    assert.equal(ruleAllows(anyStatus, res('update', 'apps', 'deployments', { subresource: 'status' })), true);
    assert.equal(ruleAllows(anyStatus, res('update', 'apps', 'deployments')), false);
  });

  it('limit to resourceNames when given (a request without a name matches none)', () => {
    const rule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['one'] };
    assert.equal(ruleAllows(rule, res('get', '', 'configmaps', { name: 'one' })), true);
    assert.equal(ruleAllows(rule, res('get', '', 'configmaps', { name: 'two' })), false);
    assert.equal(ruleAllows(rule, res('list', '', 'configmaps')), false);
  });

  it('match non-resource URLs exactly or by a trailing "*"', () => {
    const rule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    assert.equal(ruleAllows(rule, { kind: 'nonresource', verb: 'get', path: '/healthz' }), true);
    assert.equal(ruleAllows(rule, { kind: 'nonresource', verb: 'get', path: '/apis/apps/v1' }), true);
    assert.equal(ruleAllows(rule, { kind: 'nonresource', verb: 'post', path: '/healthz' }), false);
    assert.equal(ruleAllows(rule, { kind: 'nonresource', verb: 'get', path: '/metrics' }), false);
    assert.equal(ruleAllows({ verbs: ['get'], apiGroups: ['*'], resources: ['*'] }, { kind: 'nonresource', verb: 'get', path: '/metrics' }), false, 'resource rules grant no paths');
    assert.equal(ruleAllows('garbage', res('get', '', 'pods')), false);
  });

  it('name users, groups and service accounts (a RoleBinding lends its namespace to a ServiceAccount subject without one)', () => {
    const jane = { name: 'jane', groups: ['devs', 'system:authenticated'] };
    assert.equal(subjectMatches({ kind: 'User', name: 'jane' }, jane, 'a'), true);
    assert.equal(subjectMatches({ kind: 'Group', name: 'devs' }, jane, 'a'), true);
    assert.equal(subjectMatches({ kind: 'Group', name: 'ops' }, jane, 'a'), false);
    const sa = { name: 'system:serviceaccount:a:ci', groups: [] };
    assert.equal(subjectMatches({ kind: 'ServiceAccount', name: 'ci' }, sa, 'a'), true);
    assert.equal(subjectMatches({ kind: 'ServiceAccount', name: 'ci' }, sa, 'b'), false);
    assert.equal(subjectMatches({ kind: 'ServiceAccount', name: 'ci', namespace: 'a' }, sa, undefined), true);
    assert.equal(subjectMatches({ kind: 'ServiceAccount', name: 'ci' }, sa, undefined), false);
  });

  it('find what one set of rules does not cover, piece by piece', () => {
    const admin = [
      { verbs: ['get', 'list', 'watch', 'create'], apiGroups: [''], resources: ['pods', 'configmaps'] },
      { verbs: ['*'], apiGroups: ['apps'], resources: ['*'] },
      { verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] },
      { verbs: ['get'], nonResourceURLs: ['/apis/*'] },
    ];
    assert.deepEqual(uncoveredRules(admin, [{ verbs: ['get', 'create'], apiGroups: [''], resources: ['pods'] }, { verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments/scale'] }]), []);
    assert.deepEqual(uncoveredRules(admin, [{ verbs: ['get', 'delete'], apiGroups: [''], resources: ['pods'] }]), [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]);
    assert.deepEqual(uncoveredRules(admin, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }]), []);
    assert.equal(uncoveredRules(admin, [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }]).length, 1, 'a name-limited rule does not cover all names');
    assert.deepEqual(uncoveredRules(admin, [{ verbs: ['get'], nonResourceURLs: ['/apis/apps', '/apis/*'] }]), []);
    assert.equal(uncoveredRules(admin, [{ verbs: ['get'], nonResourceURLs: ['/metrics'] }]).length, 1);
    assert.equal(uncoveredRules(admin, [{ verbs: ['*'], apiGroups: [''], resources: ['pods'] }]).length, 1, '"*" is more than the verbs listed');
    assert.equal(describeRule({ verbs: ['get'], apiGroups: [''], resources: ['nodes'] }), '{APIGroups:[""], Resources:["nodes"], Verbs:["get"]}');
  });
});

describe('RbacAuthorizer', () => {
  const role = (name: string, rules: unknown[], namespace?: string): RoleLike => ({ metadata: { name, ...(namespace ? { namespace } : {}) }, rules } as RoleLike);
  const binding = (name: string, kind: string, roleName: string, subjects: unknown[], namespace?: string): Binding =>
    ({ metadata: { name, ...(namespace ? { namespace } : {}) }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name: roleName }, subjects } as Binding);
  const objects: RbacObjects = {
    clusterRoleBindings: () => [binding('readers', 'ClusterRole', 'reader', [{ kind: 'Group', name: 'readers' }])],
    roleBindings: (ns) => (ns === 'a' ? [binding('w', 'Role', 'writer', [{ kind: 'User', name: 'jane' }], 'a'), binding('r', 'ClusterRole', 'reader', [{ kind: 'ServiceAccount', name: 'ci' }], 'a'), binding('gone', 'Role', 'missing', [{ kind: 'User', name: 'jane' }], 'a')] : []),
    clusterRole: (name) => (name === 'reader' ? role('reader', [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }]) : undefined),
    role: (ns, name) => (ns === 'a' && name === 'writer' ? role('writer', [{ verbs: ['create'], apiGroups: [''], resources: ['configmaps'] }], 'a') : undefined),
  };
  const rbac = new RbacAuthorizer(objects);
  const jane = { name: 'jane', groups: ['system:authenticated'] };

  it('allows what a binding in the namespace or a cluster binding grants, and only there', async () => {
    assert.equal(rbac.allows(jane, res('create', '', 'configmaps', { namespace: 'a' })), true);
    assert.equal(rbac.allows(jane, res('create', '', 'configmaps', { namespace: 'b' })), false);
    assert.equal(rbac.allows({ name: 'x', groups: ['readers'] }, res('list', '', 'pods', { namespace: 'b' })), true);
    assert.equal(rbac.allows({ name: 'x', groups: ['readers'] }, res('list', '', 'pods')), true, 'cluster bindings reach cluster-wide lists');
    assert.equal(rbac.allows({ name: 'system:serviceaccount:a:ci', groups: [] }, res('get', '', 'pods', { namespace: 'a', name: 'p' })), true);
    assert.equal(rbac.allows({ name: 'system:serviceaccount:a:ci', groups: [] }, res('get', '', 'pods')), false, 'a RoleBinding grants nothing cluster-wide');
    assert.equal(await rbac.authorize(jane, { kind: 'resource', verb: 'delete', group: '', version: 'v1', resource: 'pods', namespace: 'a', name: 'p' }), 'no rule allows it');
  });

  it('lists the rules a user holds where it asks (a binding to a missing role grants nothing)', () => {
    assert.deepEqual(rbac.rulesFor(jane, 'a'), [{ verbs: ['create'], apiGroups: [''], resources: ['configmaps'] }]);
    assert.deepEqual(rbac.rulesFor(jane, undefined), []);
  });
});
