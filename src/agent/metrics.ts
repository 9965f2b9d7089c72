// The agent's Prometheus metrics, served on its kubelet port at /metrics (and through the API
// server at /api/v1/nodes/<node>/proxy/metrics), under the kubelet's names where one means the
// same here: the node's name, running pods and containers by state, how long a pod sync takes;
// and client-go's rest_client_* for its API requests.
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { ClientMetrics, metricsText } from '../client/metrics.js';
import type { PodWorker } from './pod-worker.js';

function containerState(state: { waiting?: unknown; running?: unknown; terminated?: unknown }): 'created' | 'running' | 'exited' | 'unknown' {
  if (state.running) return 'running';
  if (state.terminated) return 'exited';
  if (state.waiting) return 'created';
  return 'unknown';
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly client = new ClientMetrics(this.registry);
  private readonly podWorkerDuration: Histogram<'operation'>;

  constructor(nodeName: string, workers: () => PodWorker[]) {
    const registers = [this.registry];
    new Gauge({ name: 'kubelet_node_name', help: "The node's name; the value is always 1.", labelNames: ['node'], registers }).set({ node: nodeName }, 1);
    new Gauge({
      name: 'kubelet_running_pods',
      help: 'Pods with at least one container running.',
      registers,
      collect() {
        this.set(workers().filter((w) => w.hasRunning()).length);
      },
    });
    new Gauge({
      name: 'kubelet_running_containers',
      help: 'Containers by state: created (waiting to start), running, exited.',
      labelNames: ['container_state'],
      registers,
      collect() {
        const counts = { created: 0, running: 0, exited: 0, unknown: 0 };
        for (const w of workers()) {
          const snap = w.snapshot();
          for (const c of [...snap.initContainers, ...snap.containers]) counts[containerState(c.state)]++;
        }
        for (const [state, n] of Object.entries(counts)) this.set({ container_state: state }, n);
      },
    });
    this.podWorkerDuration = new Histogram({
      name: 'kubelet_pod_worker_duration_seconds',
      help: "Seconds one sync of a pod takes: starting, restarting or stopping its containers and writing its status.",
      labelNames: ['operation'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    collectDefaultMetrics({ register: this.registry });
  }

  podSynced(seconds: number): void {
    this.podWorkerDuration.observe({ operation: 'sync' }, seconds);
  }

  async text(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await metricsText(this.registry) };
  }
}
