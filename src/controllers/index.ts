// Every controller `skiff server` runs (while it leads), in start order.
import { HorizontalPodAutoscalerController } from './horizontal-pod-autoscaler.js';
import type { Controller } from '../controller-kit/manager.js';
import { NamespaceController } from './namespace.js';
import { REPLICATION_CONTROLLERS, ReplicaSetController } from './replicaset.js';
import { DeploymentController } from './deployment.js';
import { DaemonSetController } from './daemonset.js';
import { StatefulSetController } from './statefulset.js';
import { VolumeBindingController } from './volume-binding.js';
import { ResourceQuotaController } from './resource-quota.js';
import { EndpointsController } from './endpoints.js';
import { EndpointSliceController } from './endpointslices.js';
import { JobController } from './job.js';
import { CronJobController } from './cronjob.js';
import { ServiceAccountsController } from './serviceaccounts.js';
import { ClusterRoleAggregationController } from './clusterrole-aggregation.js';
import { RootCaPublisherController } from './root-ca-publisher.js';
import { ServiceAccountTokenSecretsController } from './service-account-token-secrets.js';
import { DisruptionController } from './disruption.js';
import { NodeLifecycleController } from './node-lifecycle.js';
import { TaintEvictionController } from './taint-eviction.js';
import { PodGCController } from './pod-gc.js';
import { GarbageCollectorController } from './garbage-collector.js';
import { SchedulerController } from '../scheduler/scheduler.js';
import { CsrSigningController } from './csr-signing.js';
import { CsrApprovingController } from './csr-approving.js';
import { CsrCleanerController } from './csr-cleaner.js';
import type { CloudProvider } from '../cloud/provider.js';
import { CloudNodeController } from './cloud-node.js';
import { NodeIpamController, type NodeIpamOptions } from './node-ipam.js';
import { CloudNodeLifecycleController } from './cloud-node-lifecycle.js';
import { CloudServiceController } from './cloud-service.js';
import { ClusterAutoscaler, type AutoscalerOptions } from '../cloud/autoscaler/autoscaler.js';

interface ControllerEntry {
  /** As kube-controller-manager's --controllers spells it (the scheduler, which skiff runs beside them, as `scheduler`). */
  name: string;
  /** Older spellings upstream still accepts. */
  aliases: readonly string[];
  make(): Controller;
  /** False for a controller this server's options leave out (the cloud's without a cloud). */
  available: boolean;
}

/** Every controller skiff has, in start order; `cloud`, `autoscaler` and `ipam` add the ones they need. */
function entries(cloud?: CloudProvider, autoscaler?: AutoscalerOptions, ipam?: NodeIpamOptions): ControllerEntry[] {
  const e = (name: string, aliases: string[], make: () => Controller, available = true): ControllerEntry => ({ name, aliases, make, available });
  return [
    e('namespace-controller', ['namespace'], () => new NamespaceController()),
    e('replicaset-controller', ['replicaset'], () => new ReplicaSetController()),
    e('replicationcontroller-controller', ['replicationcontroller'], () => new ReplicaSetController(REPLICATION_CONTROLLERS)),
    e('deployment-controller', ['deployment'], () => new DeploymentController()),
    e('daemonset-controller', ['daemonset'], () => new DaemonSetController()),
    e('statefulset-controller', ['statefulset'], () => new StatefulSetController()),
    e('persistentvolume-binder-controller', ['persistentvolume-binder'], () => new VolumeBindingController()),
    e('resourcequota-controller', ['resourcequota'], () => new ResourceQuotaController()),
    e('endpoints-controller', ['endpoint'], () => new EndpointsController()),
    e('endpointslice-controller', ['endpointslice'], () => new EndpointSliceController()),
    e('job-controller', ['job'], () => new JobController()),
    e('cronjob-controller', ['cronjob'], () => new CronJobController()),
    e('serviceaccount-controller', ['serviceaccount'], () => new ServiceAccountsController()),
    e('clusterrole-aggregation-controller', ['clusterrole-aggregation'], () => new ClusterRoleAggregationController()),
    e('root-ca-certificate-publisher-controller', ['root-ca-cert-publisher'], () => new RootCaPublisherController()),
    e('serviceaccount-token-controller', ['serviceaccount-token'], () => new ServiceAccountTokenSecretsController()),
    e('disruption-controller', ['disruption'], () => new DisruptionController()),
    e('horizontal-pod-autoscaler-controller', ['horizontalpodautoscaling'], () => new HorizontalPodAutoscalerController()),
    e('node-lifecycle-controller', ['nodelifecycle'], () => new NodeLifecycleController()),
    e('taint-eviction-controller', [], () => new TaintEvictionController()),
    e('pod-garbage-collector-controller', ['podgc'], () => new PodGCController()),
    e('garbage-collector-controller', ['garbagecollector'], () => new GarbageCollectorController()),
    e('certificatesigningrequest-signing-controller', ['csrsigning'], () => new CsrSigningController()),
    e('certificatesigningrequest-approving-controller', ['csrapproving'], () => new CsrApprovingController()),
    e('certificatesigningrequest-cleaner-controller', ['csrcleaner'], () => new CsrCleanerController()),
    e('scheduler', [], () => new SchedulerController()),
    e('node-ipam-controller', ['nodeipam'], () => new NodeIpamController(ipam!), ipam !== undefined),
    e('cloud-node-controller', ['cloud-node'], () => new CloudNodeController(cloud!), cloud !== undefined),
    e('cloud-node-lifecycle-controller', ['cloud-node-lifecycle'], () => new CloudNodeLifecycleController(cloud!), cloud !== undefined),
    e('service-lb-controller', ['service'], () => new CloudServiceController(cloud!), cloud !== undefined),
    e('cluster-autoscaler', [], () => new ClusterAutoscaler(cloud!, autoscaler!), cloud !== undefined && autoscaler !== undefined && autoscaler.groups.length > 0),
  ];
}

/** Every name --controllers takes (whether or not this server's options add that controller). */
export const CONTROLLER_NAMES: readonly string[] = entries().flatMap((c) => [c.name, ...c.aliases]);

/** Refuses a --controllers list naming a controller skiff does not have, in upstream's words. */
export function validateControllerSelection(selection: readonly string[]): void {
  for (const item of selection) {
    const name = item.startsWith('-') ? item.slice(1) : item;
    if (name !== '*' && !CONTROLLER_NAMES.includes(name)) throw new Error(`--controllers: "${name}" is not in the list of known controllers`);
  }
}

/** Whether a selection (kube-controller-manager's rules: an explicit name wins over `*`) enables a controller. */
function enabled(entry: ControllerEntry, selection: readonly string[]): boolean {
  const names = [entry.name, ...entry.aliases];
  if (selection.some((s) => names.includes(s))) return true;
  if (selection.some((s) => s.startsWith('-') && names.includes(s.slice(1)))) return false;
  return selection.includes('*');
}

/**
 * The controllers `skiff server` runs (while it leads): `cloud` adds the ones that reconcile Nodes
 * with the cloud's instances, `autoscaler` the cluster autoscaler, `ipam` pod CIDRs for nodes;
 * `selection` (--controllers) picks among them.
 */
export function allControllers(cloud?: CloudProvider, autoscaler?: AutoscalerOptions, ipam?: NodeIpamOptions, selection: readonly string[] = ['*']): Controller[] {
  validateControllerSelection(selection);
  return entries(cloud, autoscaler, ipam)
    .filter((c) => c.available && enabled(c, selection))
    .map((c) => c.make());
}
