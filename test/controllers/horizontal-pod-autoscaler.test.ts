// The HPA controller against a real in-process API server and ReplicaSet controller, with pod
// metrics given in memory: it scales the target through its scale subresource, up within the
// default policies and down once the (shortened) stabilization window allows, with upstream's
// status, conditions and events.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HorizontalPodAutoscaler } from '../../src/api/kinds/horizontalpodautoscaler.js';
import { ReplicaSetController } from '../../src/controllers/replicaset.js';
import { DEFAULT_HPA_OPTIONS, HorizontalPodAutoscalerController, type ResourceMetricsReader } from '../../src/controllers/horizontal-pod-autoscaler.js';
import type { PodMetrics } from '../../src/controllers/hpa-replica-calculator.js';
import { events, eventually, nsPath, pods, simulateKubelet, startControllers, startHarness, type Harness } from './workload-harness.js';

const MI = 1024 * 1024 * 1000; // a mebibyte in milli-bytes

class InMemoryMetrics implements ResourceMetricsReader {
  perPodMilli = 0;
  constructor(private readonly h: Harness) {}
  async podMetrics(namespace: string, selector: string): Promise<{ metrics: PodMetrics; timestamp: number }> {
    const now = Date.now();
    const list = await pods(this.h.client, namespace, selector);
    return { metrics: new Map(list.map((p) => [p.metadata.name!, { timestamp: now, windowMs: 30_000, value: this.perPodMilli }])), timestamp: now };
  }
}

describe('horizontal pod autoscaler controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it('scales a ReplicaSet up on memory utilization above target and back down, with status, conditions and events', async () => {
    const ns = await h.namespace('hpa');
    const metrics = new InMemoryMetrics(h);
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new ReplicaSetController(), new HorizontalPodAutoscalerController({ ...DEFAULT_HPA_OPTIONS, syncPeriodMs: 200 }, () => metrics)]);
    try {
      await h.client.create(nsPath(ns, 'replicasets'), {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'x', resources: { requests: { memory: '100Mi' } } }] } },
        },
      });
      metrics.perPodMilli = 100 * MI;
      const hpaPath = nsPath(ns, 'horizontalpodautoscalers', undefined, 'autoscaling/v2');
      await h.client.create(hpaPath, {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web' },
          minReplicas: 1,
          maxReplicas: 6,
          metrics: [{ type: 'Resource', resource: { name: 'memory', target: { type: 'Utilization', averageUtilization: 50 } } }],
          behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
        },
      });
      const rsReplicas = async () => (await h.client.get<{ spec: { replicas: number } }>(nsPath(ns, 'replicasets', 'web'))).spec.replicas;
      // 100 % of request against a 50 % target: twice the pods, within the default +4 / +100 % policy.
      await eventually(async () => (await rsReplicas()) === 4, 10_000, 'scaled to 4');
      const hpa = await eventually(async () => {
        const o = await h.client.get<HorizontalPodAutoscaler>(`${hpaPath}/web`);
        return o.status?.desiredReplicas === 4 ? o : undefined;
      }, 10_000, 'status desired 4');
      assert.ok(hpa.status?.lastScaleTime);
      const conditions = Object.fromEntries((hpa.status?.conditions ?? []).map((c) => [c.type, `${c.status}/${c.reason}`]));
      assert.equal(conditions.ScalingActive, 'True/ValidMetricFound');
      const scaled = await eventually(async () => (await events(h.client, ns, 'web')).find((e) => e.reason === 'SuccessfulRescale' && e.involvedObject.kind === 'HorizontalPodAutoscaler'), 5_000, 'event');
      assert.equal(scaled.message, 'New size: 4; reason: memory resource utilization (percentage of request) above target');

      // Usage falls to 10 %: down to one pod, no stabilization window asked for.
      metrics.perPodMilli = 10 * MI;
      await eventually(async () => (await rsReplicas()) === 1, 10_000, 'scaled down to 1');
      const down = await eventually(async () => (await events(h.client, ns, 'web')).find((e) => e.reason === 'SuccessfulRescale' && e.message.startsWith('New size: 1;')), 5_000, 'down event');
      assert.equal(down.message, 'New size: 1; reason: All metrics below target');
      const current = await eventually(async () => {
        const o = await h.client.get<HorizontalPodAutoscaler>(`${hpaPath}/web`);
        return o.status?.currentReplicas === 1 ? o : undefined;
      }, 10_000, 'status current 1');
      assert.deepEqual(current.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'memory', current: { averageUtilization: 10, averageValue: '10485760' } } }]);
    } finally {
      running.stop();
      kubelet.stop();
    }
  });
});
