// Every served kind, and lookups by resource or kind.
import type { ResourceType } from './resource.js';
import { configMapResource } from './kinds/configmap.js';
import { customResourceDefinitionResource } from './kinds/customresourcedefinition.js';
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
import { flowSchemaResource, priorityLevelConfigurationResource } from './kinds/flowcontrol.js';
import { persistentVolumeResource } from './kinds/persistentvolume.js';
import { persistentVolumeClaimResource } from './kinds/persistentvolumeclaim.js';
import { podTemplateResource } from './kinds/podtemplate.js';
import { storageClassResource } from './kinds/storageclass.js';
import { csiDriverResource } from './kinds/csidriver.js';
import { csiNodeResource } from './kinds/csinode.js';
import { volumeAttachmentResource } from './kinds/volumeattachment.js';
import { networkPolicyResource } from './kinds/networkpolicy.js';
import { ingressResource } from './kinds/ingress.js';
import { ingressClassResource } from './kinds/ingressclass.js';

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
  persistentVolumeResource,
  persistentVolumeClaimResource,
  podTemplateResource,
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
  networkPolicyResource,
  ingressResource,
  ingressClassResource,
  storageClassResource,
  csiDriverResource,
  csiNodeResource,
  volumeAttachmentResource,
  clusterRoleBindingResource,
  clusterRoleResource,
  roleBindingResource,
  roleResource,
  flowSchemaResource,
  priorityLevelConfigurationResource,
  customResourceDefinitionResource,
];

const byResource = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.resource}`, rt]));
const byKind = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.kind}`, rt]));

// Custom resources join the built-in kinds while the process runs: each served version of a
// CustomResourceDefinition is a ResourceType like any other, registered under the CRD's name.
// One process serves one cluster, so the registry is the process's.
const custom = new Map<string, readonly ResourceType[]>();
let customByResource = new Map<string, ResourceType>();
let customByKind = new Map<string, ResourceType>();
const listeners = new Set<() => void>();

/** Serves `types` for `owner` (a CRD's name) in place of what it served before; none: stops serving them. */
export function setCustomResourceTypes(owner: string, types: readonly ResourceType[]): void {
  if (types.length === 0 && !custom.has(owner)) return;
  if (types.length === 0) custom.delete(owner);
  else custom.set(owner, types);
  customByResource = new Map();
  customByKind = new Map();
  for (const list of custom.values()) {
    for (const rt of list) {
      customByResource.set(`${rt.group}/${rt.version}/${rt.resource}`, rt);
      customByKind.set(`${rt.group}/${rt.version}/${rt.kind}`, rt);
    }
  }
  for (const l of listeners) l();
}

/** Calls `listener` whenever the custom resource types change; returns the unsubscribe. */
export function onResourceTypesChanged(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Every type served now: the built-in kinds, then the custom ones. */
export function servedResourceTypes(): ResourceType[] {
  return custom.size === 0 ? allResourceTypes : [...allResourceTypes, ...[...custom.values()].flat()];
}

/** The type served at /apis/<group>/<version>/<resource> (group "" for /api/v1). */
export function resourceTypeFor(group: string, version: string, resource: string): ResourceType | undefined {
  const key = `${group}/${version}/${resource}`;
  return byResource.get(key) ?? customByResource.get(key);
}

export function resourceTypeForKind(group: string, version: string, kind: string): ResourceType | undefined {
  const key = `${group}/${version}/${kind}`;
  return byKind.get(key) ?? customByKind.get(key);
}

