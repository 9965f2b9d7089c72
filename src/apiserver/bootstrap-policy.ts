// The roles and bindings every cluster starts with, as upstream's bootstrap policy defines them:
// cluster-admin for system:masters, discovery and self-review for every authenticated user, and the
// user-facing admin/edit/view roles, built by aggregation from the system:aggregate-to-* roles (so
// charts that add rules to them through the aggregate-to-* labels work as upstream).
// The server creates them at start; one marked rbac.authorization.kubernetes.io/autoupdate=true
// (the default) gets back any rule or subject it lost, while what users added stays.
import type { Binding, PolicyRule, RoleLike, Subject } from '../api/kinds/rbac.js';
import { RBAC_GROUP } from '../api/kinds/rbac.js';
import { objArr } from '../api/kinds/json.js';
import type { KubeObject } from '../api/types.js';
import { uncoveredRules } from '../api/rbac-rules.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const AUTOUPDATE = 'rbac.authorization.kubernetes.io/autoupdate';
const BOOTSTRAPPING = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };

/** What a node's agent needs to provision local-path volumes (bound to system:nodes). */
export const LOCAL_PATH_PROVISIONER_ROLE = 'system:skiff:local-path-provisioner';

const AGGREGATE_TO = (role: 'admin' | 'edit' | 'view'): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

function rule(verbs: string[], apiGroups: string[], resources: string[]): PolicyRule {
  return { verbs, apiGroups, resources };
}

function clusterRole(name: string, rules: PolicyRule[], extra: { labels?: Record<string, string>; aggregateFrom?: string } = {}): RoleLike {
  const role: RoleLike & { aggregationRule?: unknown } = {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: { ...BOOTSTRAPPING, ...extra.labels }, annotations: { [AUTOUPDATE]: 'true' } },
    rules,
  };
  if (extra.aggregateFrom) role.aggregationRule = { clusterRoleSelectors: [{ matchLabels: { [extra.aggregateFrom]: 'true' } }] };
  return role;
}

function clusterRoleBinding(name: string, role: string, groups: string[]): Binding {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...BOOTSTRAPPING }, annotations: { [AUTOUPDATE]: 'true' } },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: role },
    subjects: groups.map((g): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name: g })),
  };
}

const DISCOVERY_URLS = ['/api', '/api/*', '/apis', '/apis/*', '/healthz', '/livez', '/openapi', '/openapi/*', '/readyz', '/version', '/version/'];
const PUBLIC_INFO_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

const CSR = 'certificatesigningrequests';
const CERTIFICATES = 'certificates.k8s.io';
const approver = (signer: string): RoleLike =>
  clusterRole(`system:certificates.k8s.io:${signer.replace('kubernetes.io/', '')}-approver`, [{ verbs: ['approve'], apiGroups: [CERTIFICATES], resources: ['signers'], resourceNames: [signer] }]);

/** Upstream's roles for TLS bootstrap: nodes ask for client certificates, the approver lets them through. */
const CERTIFICATE_ROLES: readonly RoleLike[] = [
  clusterRole('system:node-bootstrapper', [rule(['create', 'get', 'list', 'watch'], [CERTIFICATES], [CSR])]),
  clusterRole(`system:certificates.k8s.io:${CSR}:nodeclient`, [rule(['create'], [CERTIFICATES], [`${CSR}/nodeclient`])]),
  clusterRole(`system:certificates.k8s.io:${CSR}:selfnodeclient`, [rule(['create'], [CERTIFICATES], [`${CSR}/selfnodeclient`])]),
  approver('kubernetes.io/kube-apiserver-client'),
  approver('kubernetes.io/kube-apiserver-client-kubelet'),
  approver('kubernetes.io/kubelet-serving'),
  approver('kubernetes.io/legacy-unknown'),
];

export const BOOTSTRAP_CLUSTER_ROLES: readonly RoleLike[] = [
  ...CERTIFICATE_ROLES,
  clusterRole('cluster-admin', [rule(['*'], ['*'], ['*']), { verbs: ['*'], nonResourceURLs: ['*'] }]),
  clusterRole('system:discovery', [{ verbs: ['get'], nonResourceURLs: DISCOVERY_URLS }]),
  clusterRole('system:public-info-viewer', [{ verbs: ['get'], nonResourceURLs: PUBLIC_INFO_URLS }]),
  clusterRole('system:basic-user', [
    rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
    rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
  ]),
  // For components that let the API server authenticate and authorize their callers (no default binding).
  clusterRole('system:auth-delegator', [rule(['create'], ['authentication.k8s.io'], ['tokenreviews']), rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews'])]),
  // The user-facing roles hold no rules of their own: aggregation fills them in.
  clusterRole('admin', [], { aggregateFrom: AGGREGATE_TO('admin') }),
  clusterRole('edit', [], { labels: { [AGGREGATE_TO('admin')]: 'true' }, aggregateFrom: AGGREGATE_TO('edit') }),
  clusterRole('view', [], { labels: { [AGGREGATE_TO('edit')]: 'true' }, aggregateFrom: AGGREGATE_TO('view') }),
  clusterRole(
    'system:aggregate-to-admin',
    [rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']), rule([...READ, ...WRITE], [RBAC_GROUP], ['roles', 'rolebindings'])],
    { labels: { [AGGREGATE_TO('admin')]: 'true' } },
  ),
  clusterRole(
    'system:aggregate-to-edit',
    [
      // Reading these lets a user act as the pods' service accounts, so view leaves them out.
      rule(READ, [''], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
      rule(['impersonate'], [''], ['serviceaccounts']),
      rule(WRITE, [''], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
      rule(['create'], [''], ['pods/eviction']),
      rule(WRITE, [''], ['replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/proxy', 'persistentvolumeclaims', 'configmaps', 'secrets', 'events']),
      rule(['create'], [''], ['serviceaccounts/token']),
      rule(WRITE, ['apps'], ['statefulsets', 'statefulsets/scale', 'daemonsets', 'deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale']),
      rule(WRITE, ['autoscaling'], ['horizontalpodautoscalers']),
      rule(WRITE, ['batch'], ['jobs', 'cronjobs']),
      rule(WRITE, ['policy'], ['poddisruptionbudgets']),
      rule(WRITE, ['networking.k8s.io'], ['networkpolicies', 'ingresses']),
    ],
    { labels: { [AGGREGATE_TO('edit')]: 'true' } },
  ),
  clusterRole(
    'system:aggregate-to-view',
    [
      rule(READ, [''], ['pods', 'replicationcontrollers', 'replicationcontrollers/scale', 'serviceaccounts', 'services', 'services/status', 'endpoints', 'persistentvolumeclaims', 'persistentvolumeclaims/status', 'configmaps']),
      rule(READ, [''], ['limitranges', 'resourcequotas', 'bindings', 'events', 'pods/status', 'resourcequotas/status', 'namespaces/status', 'replicationcontrollers/status', 'pods/log']),
      // Reading namespaces in a RoleBinding's namespace reads that one namespace.
      rule(READ, [''], ['namespaces']),
      rule(READ, ['discovery.k8s.io'], ['endpointslices']),
      rule(READ, ['apps'], ['controllerrevisions', 'statefulsets', 'statefulsets/scale', 'statefulsets/status', 'daemonsets', 'daemonsets/status', 'deployments', 'deployments/scale', 'deployments/status', 'replicasets', 'replicasets/scale', 'replicasets/status']),
      rule(READ, ['autoscaling'], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
      rule(READ, ['batch'], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
      rule(READ, ['policy'], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
      rule(READ, ['networking.k8s.io'], ['networkpolicies', 'ingresses', 'ingresses/status']),
    ],
    { labels: { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true', [AGGREGATE_TO('view')]: 'true' } },
  ),
  // metrics-server's role for reading metrics.k8s.io (skiff serves the group itself), folded into view, edit and admin.
  clusterRole('system:aggregated-metrics-reader', [rule(READ, ['metrics.k8s.io'], ['pods', 'nodes'])], {
    labels: { [AGGREGATE_TO('admin')]: 'true', [AGGREGATE_TO('edit')]: 'true', [AGGREGATE_TO('view')]: 'true' },
  }),
  // Everything the kubelet's API serves, by the node subresources it authorizes its paths as (no default binding).
  clusterRole('system:kubelet-api-admin', [rule(['get', 'list', 'watch'], [''], ['nodes']), rule(['proxy'], [''], ['nodes']), rule(['*'], [''], ['nodes/log', 'nodes/metrics', 'nodes/proxy', 'nodes/stats'])]),
  // Each agent provisions local-path volumes for the claims selected to its node, as k3s's
  // local-path-provisioner does with a role of its own; NodeRestriction holds a node to volumes on itself.
  clusterRole(LOCAL_PATH_PROVISIONER_ROLE, [
    rule([...READ, 'create', 'delete'], [''], ['persistentvolumes']),
    rule(READ, [''], ['persistentvolumeclaims']),
    rule(READ, ['storage.k8s.io'], ['storageclasses']),
  ]),
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly Binding[] = [
  clusterRoleBinding('cluster-admin', 'cluster-admin', ['system:masters']),
  clusterRoleBinding('system:discovery', 'system:discovery', ['system:authenticated']),
  clusterRoleBinding('system:basic-user', 'system:basic-user', ['system:authenticated']),
  clusterRoleBinding(LOCAL_PATH_PROVISIONER_ROLE, LOCAL_PATH_PROVISIONER_ROLE, ['system:nodes']),
  clusterRoleBinding('system:public-info-viewer', 'system:public-info-viewer', ['system:authenticated', 'system:unauthenticated']),
  // What kubeadm binds for its join tokens: a bootstrap token may ask for a node client certificate,
  // which the csrapproving controller then approves; a node may renew its own.
  clusterRoleBinding('skiff:node-bootstrapper', 'system:node-bootstrapper', ['system:bootstrappers']),
  clusterRoleBinding('skiff:node-autoapprove-bootstrap', `system:certificates.k8s.io:${CSR}:nodeclient`, ['system:bootstrappers']),
  clusterRoleBinding('skiff:node-autoapprove-certificate-rotation', `system:certificates.k8s.io:${CSR}:selfnodeclient`, ['system:nodes']),
];

function autoupdate(live: KubeObject): boolean {
  return live.metadata.annotations?.[AUTOUPDATE] !== 'false';
}

/**
 * What a bootstrap object that already exists must become, or undefined when it is fine as it is:
 * rules or subjects it lost are added back, nothing is taken away. Aggregated roles are left to
 * the aggregation controller.
 */
export function reconcileBootstrapObject(want: KubeObject, live: KubeObject): KubeObject | undefined {
  if (!autoupdate(live)) return undefined;
  if (want.kind === 'ClusterRole') {
    const wantAgg = (want as { aggregationRule?: unknown }).aggregationRule;
    if (wantAgg) {
      if ((live as { aggregationRule?: unknown }).aggregationRule) return undefined;
      return { ...live, aggregationRule: wantAgg } as KubeObject;
    }
    const liveRules = objArr((live as RoleLike).rules);
    const missing = ((want as RoleLike).rules ?? []).filter((r) => uncoveredRules(liveRules, [r]).length > 0);
    return missing.length > 0 ? ({ ...live, rules: [...liveRules, ...missing] } as KubeObject) : undefined;
  }
  const liveSubjects = objArr((live as Binding).subjects) as unknown as Subject[];
  const missing = ((want as Binding).subjects ?? []).filter((s) => !liveSubjects.some((l) => l.kind === s.kind && l.name === s.name && (l.namespace ?? '') === (s.namespace ?? '')));
  return missing.length > 0 ? ({ ...live, subjects: [...liveSubjects, ...missing] } as KubeObject) : undefined;
}
