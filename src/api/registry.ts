// Every built-in kind of kube-apiserver that skiff serves, and lookups by resource or kind. The
// CustomResourceDefinition kind belongs to apiextensions (src/apiextensions), which builds on these.
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
import { certificateSigningRequestResource } from './kinds/certificatesigningrequest.js';
import { leaseResource } from './kinds/lease.js';
import { namespaceResource } from './kinds/namespace.js';
import { nodeResource } from './kinds/node.js';
import { podResource } from './kinds/pod.js';
import { podDisruptionBudgetResource } from './kinds/poddisruptionbudget.js';
import { horizontalPodAutoscalerV2Resource } from './kinds/horizontalpodautoscaler.js';
import { horizontalPodAutoscalerV1Resource } from './kinds/horizontalpodautoscaler-v1.js';
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
import { priorityClassResource } from './kinds/priorityclass.js';
import { limitRangeResource } from './kinds/limitrange.js';
import { resourceQuotaResource } from './kinds/resourcequota.js';
import { apiServiceResource } from './kinds/apiservice.js';
import { validatingWebhookConfigurationResource } from './kinds/validatingwebhookconfiguration.js';
import { mutatingWebhookConfigurationResource } from './kinds/mutatingwebhookconfiguration.js';

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
  limitRangeResource,
  resourceQuotaResource,
  replicationControllerResource,
  deploymentResource,
  replicaSetResource,
  daemonSetResource,
  statefulSetResource,
  controllerRevisionResource,
  jobResource,
  cronJobResource,
  certificateSigningRequestResource,
  horizontalPodAutoscalerV2Resource,
  horizontalPodAutoscalerV1Resource,
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
  priorityClassResource,
  apiServiceResource,
  validatingWebhookConfigurationResource,
  mutatingWebhookConfigurationResource,
];

const byResource = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.resource}`, rt]));
const byKind = new Map(allResourceTypes.map((rt) => [`${rt.group}/${rt.version}/${rt.kind}`, rt]));

/** The built-in type served at /apis/<group>/<version>/<resource> (group "" for /api/v1). */
export function resourceTypeFor(group: string, version: string, resource: string): ResourceType | undefined {
  return byResource.get(`${group}/${version}/${resource}`);
}

export function resourceTypeForKind(group: string, version: string, kind: string): ResourceType | undefined {
  return byKind.get(`${group}/${version}/${kind}`);
}

/**
 * The types one API server serves: the built-in kinds, and the custom ones its
 * CustomResourceDefinitions add while it runs (each served version a ResourceType like any other,
 * registered under the CRD's name). The server owns it and hands it to what needs it.
 */
export class ResourceRegistry {
  private readonly custom = new Map<string, readonly ResourceType[]>();
  private customByResource = new Map<string, ResourceType>();
  private readonly builtinByResource: Map<string, ResourceType>;

  /** `builtins`: the kinds served from the start (the built-in ones and apiextensions' own). */
  constructor(private readonly builtins: readonly ResourceType[]) {
    this.builtinByResource = new Map(builtins.map((rt) => [`${rt.group}/${rt.version}/${rt.resource}`, rt]));
  }

  /** Serves `types` for `owner` (a CRD's name) in place of what it served before; none: stops serving them. */
  setCustomTypes(owner: string, types: readonly ResourceType[]): void {
    if (types.length === 0 && !this.custom.has(owner)) return;
    if (types.length === 0) this.custom.delete(owner);
    else this.custom.set(owner, types);
    this.customByResource = new Map();
    for (const list of this.custom.values()) for (const rt of list) this.customByResource.set(`${rt.group}/${rt.version}/${rt.resource}`, rt);
  }

  /** The custom types served for `owner` (a CRD's name). */
  customTypesOf(owner: string): readonly ResourceType[] {
    return this.custom.get(owner) ?? [];
  }

  /** Every type served now: the built-in kinds, then the custom ones. */
  served(): ResourceType[] {
    return [...this.builtins, ...[...this.custom.values()].flat()];
  }

  /** The type served at /apis/<group>/<version>/<resource> (group "" for /api/v1). */
  typeFor(group: string, version: string, resource: string): ResourceType | undefined {
    const key = `${group}/${version}/${resource}`;
    return this.builtinByResource.get(key) ?? this.customByResource.get(key);
  }
}
