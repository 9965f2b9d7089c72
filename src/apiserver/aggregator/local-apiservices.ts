// The local APIServices: one for every group-version this server serves itself, as upstream's
// autoregister controller keeps them (built-in ones `v1.`, `v1.apps`, …; one per served version of
// each CustomResourceDefinition), so `kubectl get apiservices` reads as on any cluster. They carry
// the automanaged label; one whose group-version is no longer served goes, and one that was
// changed is put back.
import { APIREGISTRATION_GROUP, type APIService } from '../../api/kinds/apiservice.js';

export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

export interface GroupVersion {
  group: string;
  version: string;
}

/**
 * Upstream's discovery order of the built-in group-versions (kube-apiserver's
 * apiVersionPriorities): group priority, then version priority within the group.
 */
const BUILTIN_PRIORITIES: Readonly<Record<string, readonly [number, number]>> = {
  v1: [18000, 1],
  'apps/v1': [17800, 15],
  'events.k8s.io/v1': [17750, 15],
  'authentication.k8s.io/v1': [17700, 15],
  'authentication.k8s.io/v1beta1': [17700, 9],
  'authorization.k8s.io/v1': [17600, 15],
  'autoscaling/v1': [17500, 15],
  'autoscaling/v2': [17500, 30],
  'batch/v1': [17400, 15],
  'certificates.k8s.io/v1': [17300, 15],
  'networking.k8s.io/v1': [17200, 15],
  'policy/v1': [17100, 15],
  'rbac.authorization.k8s.io/v1': [17000, 15],
  'storage.k8s.io/v1': [16800, 15],
  'apiextensions.k8s.io/v1': [16700, 15],
  'admissionregistration.k8s.io/v1': [16700, 15],
  'scheduling.k8s.io/v1': [16600, 15],
  'coordination.k8s.io/v1': [16500, 15],
  'node.k8s.io/v1': [16300, 15],
  'discovery.k8s.io/v1': [16200, 15],
  'flowcontrol.apiserver.k8s.io/v1': [16100, 21],
  'apiregistration.k8s.io/v1': [18000, 15],
  // Served here in place of metrics-server, with the priorities its APIService carries.
  'metrics.k8s.io/v1beta1': [100, 100],
};

/** What upstream's CRD registration gives a custom resource's group-version. */
const CUSTOM_PRIORITY: readonly [number, number] = [1000, 100];

function apiServiceName(gv: GroupVersion): string {
  return `${gv.version}.${gv.group}`;
}

/** The local APIService of each group-version: built-in ones with upstream's priorities, others as custom resources'. */
export function localAPIServices(groupVersions: readonly GroupVersion[]): APIService[] {
  const seen = new Set<string>();
  const out: APIService[] = [];
  for (const gv of groupVersions) {
    const name = apiServiceName(gv);
    if (seen.has(name)) continue;
    seen.add(name);
    const builtin = BUILTIN_PRIORITIES[gv.group ? `${gv.group}/${gv.version}` : gv.version];
    const [groupPriorityMinimum, versionPriority] = builtin ?? CUSTOM_PRIORITY;
    out.push({
      apiVersion: `${APIREGISTRATION_GROUP}/v1`,
      kind: 'APIService',
      // Built-in ones are synced when the server starts, custom resources' while it runs (upstream's two label values).
      metadata: { name, labels: { [AUTOMANAGED_LABEL]: builtin ? 'onstart' : 'true' } },
      spec: { group: gv.group, version: gv.version, groupPriorityMinimum, versionPriority },
    });
  }
  return out;
}

/** The spec as it should be, when `live` drifted from `want` (a service added, priorities changed); undefined when it has not. */
export function driftedSpec(want: APIService, live: APIService): APIService['spec'] | undefined {
  const a = want.spec ?? {};
  const b = live.spec ?? {};
  const same = b.service == null && b.group === a.group && b.version === a.version && b.groupPriorityMinimum === a.groupPriorityMinimum && b.versionPriority === a.versionPriority && !b.caBundle && !b.insecureSkipTLSVerify;
  return same ? undefined : a;
}
