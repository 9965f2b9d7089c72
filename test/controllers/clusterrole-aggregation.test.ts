import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { aggregatedRules } from '../../src/controllers/clusterrole-aggregation.js';
import { BOOTSTRAP_CLUSTER_ROLES, reconcileBootstrapObject } from '../../src/apiserver/bootstrap-policy.js';
import type { RoleLike } from '../../src/api/kinds/rbac.js';

const role = (name: string, labels: Record<string, string>, rules: unknown[], aggregateFrom?: string): RoleLike =>
  ({
    metadata: { name, labels },
    rules,
    ...(aggregateFrom ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [aggregateFrom]: 'true' } }] } } : {}),
  }) as RoleLike;

describe('ClusterRole aggregation', () => {
  it('gathers the rules of matching roles in name order, each once, never its own', () => {
    const get = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
    const list = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };
    const agg = role('view', {}, [{ verbs: ['stale'] }], 'to-view');
    const all = [agg, role('b', { 'to-view': 'true' }, [list, get]), role('a', { 'to-view': 'true' }, [get]), role('c', { other: 'true' }, [{ verbs: ['*'] }])];
    assert.deepEqual(aggregatedRules(agg, all), [get, list]);
    assert.deepEqual(aggregatedRules(role('x', {}, []), all), [], 'no aggregationRule: nothing');
  });

  it('bootstrap roles come back with rules they lost, keep rules users added, and stay alone when autoupdate is off', () => {
    const basic = BOOTSTRAP_CLUSTER_ROLES.find((r) => r.metadata.name === 'system:basic-user')!;
    const added = { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] };
    const stripped = { ...basic, rules: [added] } as RoleLike;
    const fixed = reconcileBootstrapObject(basic, stripped) as RoleLike;
    assert.deepEqual(fixed.rules, [added, ...basic.rules!]);
    assert.equal(reconcileBootstrapObject(basic, fixed), undefined);
    const pinned = { ...stripped, metadata: { ...stripped.metadata, annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } } } as RoleLike;
    assert.equal(reconcileBootstrapObject(basic, pinned), undefined);
  });
});
