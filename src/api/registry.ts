// Every served kind, and lookups by resource or kind.
import type { ResourceType } from './resource.js';
import { configMapResource } from './kinds/configmap.js';
import { controllerRevisionResource } from './kinds/controllerrevision.js';
import { daemonSetResource } from './kinds/daemonset.js';
import { statefulSetResource } from './kinds/statefulset.js';
import { deploymentResource } from './kinds/deployment.js';
import { endpointsResource } from './kinds/endpoints.js';
import { endpointSliceResource } from './kinds/endpointslice.js';
import { eventResource } from './kinds/event.js';
import { jobResource } from './kinds/job.js';
import { cronJobResource } from './kinds/cronjob.js';
import { leaseResource } from './kinds/lease.js';
import { namespaceResource } from './kinds/namespace.js';
import { nodeResource } from './kinds/node.js';
import { podResource } from './kinds/pod.js';
import { podDisruptionBudgetResource } from './kinds/poddisruptionbudget.js';
import { replicaSetResource } from './kinds/replicaset.js';
import { replicationControllerResource } from './kinds/replicationcontroller.js';
import { secretResource } from './kinds/secret.js';
import { serviceAccountResource } from './kinds/serviceaccount.js';
import { clusterRoleBindingResource, clusterRoleResource, roleBindingResource, roleResource } from './kinds/rbac.js';
import { serviceResource } from './kinds/service.js';

/** In discovery order: core/v1 first, then the named groups. */
export const allResourceTypes: ResourceType[] = [
  namespaceResource,
  nodeResource,
  podResource,
  eventResource,
  serviceResource,
  endpointsResource,
  configMapResource,
  secretResource,
  serviceAccountResource,
  replicationControllerResource,
  deploymentResource,
  replicaSetResource,
  daemonSetResource,
  statefulSetResource,
  controllerRevisionResource,
  jobResource,
  cronJobResource,
  leaseResource,
  podDisruptionBudgetResource,
  endpointSliceResource,
  clusterRoleBindingResource,
  clusterRoleResource,
  roleBindingResource,
  roleResource,
];

const byResource = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.resource}`, rt]));
const byKind = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.kind}`, rt]));

/** The type served at /apis/<group>/<version>/<resource> (group "" for /api/v1). */
export function resourceTypeFor(group: string, version: string, resource: string): ResourceType | undefined {
  return byResource.get(`${group}/${version}/${resource}`);
}

export function resourceTypeForKind(group: string, version: string, kind: string): ResourceType | undefined {
  return byKind.get(`${group}/${version}/${kind}`);
}

/** Group/versions served, in discovery order, e.g. ["v1", "apps/v1", ...]. */
export function servedGroupVersions(): string[] {
  const out: string[] = [];
  for (const rt of allResourceTypes) {
    const gv = rt.group ? `${rt.group}/${rt.version}` : rt.version;
    if (!out.includes(gv)) out.push(gv);
  }
  return out;
}
