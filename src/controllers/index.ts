// Every controller `skiff server` runs (while it leads), in start order.
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
import type { CloudProvider } from '../cloud/provider.js';
import { CloudNodeController } from './cloud-node.js';
import { NodeIpamController, type NodeIpamOptions } from './node-ipam.js';
import { CloudNodeLifecycleController } from './cloud-node-lifecycle.js';
import { ClusterAutoscaler, type AutoscalerOptions } from '../cloud/autoscaler/autoscaler.js';

/** `cloud`: the controllers that reconcile Nodes with their cloud's instances run too; `autoscaler`: and the cluster autoscaler; `ipam`: nodes get pod CIDRs. */
export function allControllers(cloud?: CloudProvider, autoscaler?: AutoscalerOptions, ipam?: NodeIpamOptions): Controller[] {
  return [
    new NamespaceController(),
    new ReplicaSetController(),
    new ReplicaSetController(REPLICATION_CONTROLLERS),
    new DeploymentController(),
    new DaemonSetController(),
    new StatefulSetController(),
    new VolumeBindingController(),
    new ResourceQuotaController(),
    new EndpointsController(),
    new EndpointSliceController(),
    new JobController(),
    new CronJobController(),
    new ServiceAccountsController(),
    new ClusterRoleAggregationController(),
    new RootCaPublisherController(),
    new ServiceAccountTokenSecretsController(),
    new DisruptionController(),
    new NodeLifecycleController(),
    new TaintEvictionController(),
    new PodGCController(),
    new GarbageCollectorController(),
    new SchedulerController(),
    ...(ipam ? [new NodeIpamController(ipam)] : []),
    ...(cloud ? [new CloudNodeController(cloud), new CloudNodeLifecycleController(cloud)] : []),
    ...(cloud && autoscaler && autoscaler.groups.length > 0 ? [new ClusterAutoscaler(cloud, autoscaler)] : []),
  ];
}
