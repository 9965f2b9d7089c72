// The cluster autoscaler's metrics, with upstream's names (prefix cluster_autoscaler_). One set per
// registry: the autoscaler starts again at every leadership term, its counters go on counting.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface AutoscalerMetrics {
  safeToAutoscale: Gauge;
  nodesCount: Gauge<'state'>;
  unschedulablePods: Gauge;
  scaledUpNodes: Counter;
  scaledDownNodes: Counter;
  failedScaleUps: Counter<'reason'>;
  unregisteredRemoved: Counter;
  errors: Counter<'type'>;
  functionDuration: Histogram<'function'>;
}

const byRegistry = new WeakMap<Registry, AutoscalerMetrics>();

export function autoscalerMetrics(registry: Registry): AutoscalerMetrics {
  let m = byRegistry.get(registry);
  if (m) return m;
  const registers = [registry];
  m = {
    safeToAutoscale: new Gauge({ name: 'cluster_autoscaler_cluster_safe_to_autoscale', help: 'Whether the autoscaler acts on the cluster (1) or holds back (0).', registers }),
    nodesCount: new Gauge({ name: 'cluster_autoscaler_nodes_count', help: 'Nodes by state, as upstream counts them: ready, unready, notStarted (registered, never Ready yet), unregistered (instances without a Node yet), longUnregistered (past the provision time).', labelNames: ['state'], registers }),
    unschedulablePods: new Gauge({ name: 'cluster_autoscaler_unschedulable_pods_count', help: 'Pods the scheduler could not place, as of the last loop.', registers }),
    scaledUpNodes: new Counter({ name: 'cluster_autoscaler_scaled_up_nodes_total', help: 'Nodes added by scale-ups.', registers }),
    scaledDownNodes: new Counter({ name: 'cluster_autoscaler_scaled_down_nodes_total', help: 'Nodes removed by scale-downs.', registers }),
    failedScaleUps: new Counter({ name: 'cluster_autoscaler_failed_scale_ups_total', help: 'Scale-ups that failed, by reason.', labelNames: ['reason'], registers }),
    unregisteredRemoved: new Counter({ name: 'cluster_autoscaler_old_unregistered_nodes_removed_count', help: 'Instances removed because they had no Node past the provision time.', registers }),
    errors: new Counter({ name: 'cluster_autoscaler_errors_total', help: 'Autoscaler loops that failed, by type.', labelNames: ['type'], registers }),
    functionDuration: new Histogram({
      name: 'cluster_autoscaler_function_duration_seconds',
      help: 'Time taken by the parts of the autoscaler loop: main (the whole loop), scaleUp, scaleDown.',
      labelNames: ['function'],
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
  };
  byRegistry.set(registry, m);
  return m;
}
