// The priority levels and flow schemas every server starts with, as upstream's: the mandatory ones
// (exempt, catch-all) are kept as they are whatever is written over them; the suggested ones are
// made once and then updated only while their `apf.kubernetes.io/autoupdate-spec` says "true", so
// an administrator's edit sticks once they set it to "false".
import type { FlowSchema, PolicyRulesWithSubjects, PriorityLevelConfiguration, PriorityLevelConfigurationSpec, Subject } from '../../api/kinds/flowcontrol.js';
import { deepClone, jsonEqual } from '../../api/kinds/json.js';

export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

function level(name: string, spec: PriorityLevelConfigurationSpec): PriorityLevelConfiguration {
  return { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } }, spec };
}

function queued(shares: number, lendablePercent: number, queues: number, handSize: number, queueLengthLimit: number): PriorityLevelConfigurationSpec {
  return { type: 'Limited', limited: { nominalConcurrencyShares: shares, lendablePercent, limitResponse: { type: 'Queue', queuing: { queues, handSize, queueLengthLimit } } } };
}

function schema(name: string, priorityLevel: string, matchingPrecedence: number, distinguisher: 'ByUser' | 'ByNamespace' | undefined, ...rules: PolicyRulesWithSubjects[]): FlowSchema {
  return {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name, annotations: { [AUTO_UPDATE_ANNOTATION]: 'true' } },
    spec: { priorityLevelConfiguration: { name: priorityLevel }, matchingPrecedence, ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}), rules },
  };
}

const groups = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'Group', group: { name } }));
const users = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'User', user: { name } }));
const kubeSystemServiceAccounts = (...names: string[]): Subject[] => names.map((name) => ({ kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name } }));

/** Every request of the subjects, resource or not. */
function everything(subjects: Subject[]): PolicyRulesWithSubjects {
  return {
    subjects,
    resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
    nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
  };
}

const AUTHENTICATED_OR_NOT = groups('system:unauthenticated', 'system:authenticated');
const GET_CREATE_UPDATE = ['get', 'create', 'update'];

export const MANDATORY_PRIORITY_LEVELS: readonly PriorityLevelConfiguration[] = [
  level('exempt', { type: 'Exempt', exempt: { nominalConcurrencyShares: 0, lendablePercent: 0 } }),
  level('catch-all', { type: 'Limited', limited: { nominalConcurrencyShares: 5, lendablePercent: 0, limitResponse: { type: 'Reject' } } }),
];

export const SUGGESTED_PRIORITY_LEVELS: readonly PriorityLevelConfiguration[] = [
  // Nodes and the system components that keep running pods running.
  level('system', queued(30, 33, 64, 6, 50)),
  // Node heartbeats: Leases and node status, most of a big cluster's calls.
  level('node-high', queued(40, 25, 64, 6, 50)),
  level('leader-election', queued(10, 0, 16, 4, 50)),
  level('workload-high', queued(40, 50, 128, 6, 50)),
  level('workload-low', queued(100, 90, 128, 6, 50)),
  level('global-default', queued(20, 50, 128, 6, 50)),
];

export const MANDATORY_FLOW_SCHEMAS: readonly FlowSchema[] = [
  schema('exempt', 'exempt', 1, undefined, everything(groups('system:masters'))),
  // Health probes never wait behind a flood: a load balancer must see the truth.
  schema('probes', 'exempt', 2, undefined, { subjects: AUTHENTICATED_OR_NOT, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }] }),
  schema('catch-all', 'catch-all', 10000, 'ByUser', everything(AUTHENTICATED_OR_NOT)),
];

export const SUGGESTED_FLOW_SCHEMAS: readonly FlowSchema[] = [
  schema('system-leader-election', 'leader-election', 100, 'ByUser', {
    subjects: [...users('system:kube-controller-manager', 'system:kube-scheduler'), ...kubeSystemServiceAccounts('*')],
    resourceRules: [{ verbs: GET_CREATE_UPDATE, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['kube-system'] }],
  }),
  schema('endpoint-controller', 'workload-high', 150, 'ByUser', {
    subjects: [...users('system:kube-controller-manager'), ...kubeSystemServiceAccounts('endpoint-controller')],
    resourceRules: [{ verbs: GET_CREATE_UPDATE, apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }],
  }),
  schema('workload-leader-election', 'leader-election', 200, 'ByUser', {
    subjects: kubeSystemServiceAccounts('*'),
    resourceRules: [{ verbs: GET_CREATE_UPDATE, apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] }],
  }),
  schema('system-node-high', 'node-high', 400, 'ByUser', {
    subjects: groups('system:nodes'),
    resourceRules: [
      { verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], clusterScope: true, namespaces: ['*'] },
      { verbs: ['*'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], clusterScope: true, namespaces: ['*'] },
    ],
  }),
  schema('system-nodes', 'system', 500, 'ByUser', everything(groups('system:nodes'))),
  schema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', everything(users('system:kube-controller-manager'))),
  schema('kube-scheduler', 'workload-high', 800, 'ByNamespace', everything(users('system:kube-scheduler'))),
  schema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', everything(kubeSystemServiceAccounts('*'))),
  schema('service-accounts', 'workload-low', 9000, 'ByUser', everything(groups('system:serviceaccounts'))),
  schema('global-default', 'global-default', 9900, 'ByUser', everything(AUTHENTICATED_OR_NOT)),
];

type ApfObject = FlowSchema | PriorityLevelConfiguration;

/**
 * What `live` should become so it agrees with the bootstrap object `want` (undefined: leave it).
 * Mandatory objects are always brought back, but for the exempt level's shares and lendable
 * percent, which administrators may tune; suggested ones only while they ask for auto-update
 * (a missing annotation is read as "true" on an object never edited, generation 1).
 */
export function reconcileApfObject<T extends ApfObject>(want: T, live: T, mandatory: boolean): T | undefined {
  const annotations = live.metadata.annotations ?? {};
  const flag = annotations[AUTO_UPDATE_ANNOTATION];
  const autoUpdate = mandatory || flag === 'true' || (flag === undefined && (live.metadata.generation ?? 1) === 1);
  const out = deepClone(live);
  let changed = false;
  const wantFlag = mandatory ? 'true' : flag ?? String(autoUpdate);
  if (flag !== wantFlag) {
    out.metadata.annotations = { ...annotations, [AUTO_UPDATE_ANNOTATION]: wantFlag };
    changed = true;
  }
  if (autoUpdate) {
    const spec = deepClone(want.spec) as T['spec'];
    if (mandatory && want.kind === 'PriorityLevelConfiguration' && want.metadata.name === 'exempt') {
      // The exempt level's tunables are the administrator's.
      const liveExempt = (live as PriorityLevelConfiguration).spec?.exempt;
      const wantSpec = spec as PriorityLevelConfigurationSpec;
      if (liveExempt) wantSpec.exempt = { ...wantSpec.exempt, ...liveExempt };
    }
    if (!jsonEqual(spec, live.spec)) {
      out.spec = spec;
      changed = true;
    }
  }
  return changed ? out : undefined;
}
