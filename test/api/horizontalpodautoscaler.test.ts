// autoscaling/v1 ⇄ v2 HorizontalPodAutoscaler conversion and v2 defaults, as upstream's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { horizontalPodAutoscalerFromV1, horizontalPodAutoscalerToV1 } from '../../src/api/kinds/horizontalpodautoscaler-v1.js';
import { formatHPAMetrics, horizontalPodAutoscalerV2Resource } from '../../src/api/kinds/horizontalpodautoscaler.js';

const meta = { name: 'web', namespace: 'default' };

test('v1 targetCPUUtilizationPercentage is a v2 Resource metric; none at all is the 80 % default', () => {
  const v2 = horizontalPodAutoscalerFromV1({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: meta, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5, targetCPUUtilizationPercentage: 50 } });
  assert.deepEqual(v2.spec, {
    scaleTargetRef: { kind: 'Deployment', name: 'web' },
    minReplicas: 1,
    maxReplicas: 5,
    metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
  });
  const bare = horizontalPodAutoscalerFromV1({ metadata: meta, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 5 } });
  assert.deepEqual((bare.spec as { metrics: unknown }).metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
});

test('what v1 cannot say round-trips through the autoscaling.alpha.kubernetes.io annotations', () => {
  const v2 = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { ...meta, annotations: { keep: 'me' } },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      minReplicas: 2,
      maxReplicas: 9,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 30, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] } },
    },
    status: {
      currentReplicas: 3,
      desiredReplicas: 3,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 42, averageValue: '420m' } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale', message: 'recommended size matches current size', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  };
  const v1 = horizontalPodAutoscalerToV1(v2);
  assert.deepEqual(v1.spec, { scaleTargetRef: v2.spec.scaleTargetRef, minReplicas: 2, maxReplicas: 9, targetCPUUtilizationPercentage: 60 });
  assert.deepEqual(v1.status, { currentReplicas: 3, desiredReplicas: 3, currentCPUUtilizationPercentage: 42 });
  const annotations = v1.metadata.annotations!;
  assert.equal(annotations.keep, 'me');
  assert.deepEqual(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/metrics']!), [{ type: 'Resource', resource: { name: 'memory', targetAverageValue: '100Mi' } }]);
  assert.deepEqual(JSON.parse(annotations['autoscaling.alpha.kubernetes.io/current-metrics']!), [{ type: 'Resource', resource: { name: 'cpu', currentAverageUtilization: 42, currentAverageValue: '420m' } }]);
  const back = horizontalPodAutoscalerFromV1(v1);
  assert.deepEqual(back.metadata.annotations, { keep: 'me' });
  assert.deepEqual(back.status, v2.status);
  // The other metrics come first, then the one v1 carries itself (upstream's order).
  assert.deepEqual((back.spec as { metrics: unknown }).metrics, v2.spec.metrics);
  assert.deepEqual((back.spec as { behavior: { scaleDown: unknown } }).behavior.scaleDown, v2.spec.behavior.scaleDown);
});

test('v2 defaults fill behaviour only when some is given', () => {
  const o = { metadata: meta, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3, behavior: { scaleUp: { stabilizationWindowSeconds: 10 } } } };
  horizontalPodAutoscalerV2Resource.defaults(o);
  assert.deepEqual(o.spec.behavior, {
    scaleUp: { stabilizationWindowSeconds: 10, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
    scaleDown: { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
  });
});

test("TARGETS as upstream's printer writes it", () => {
  const cpu = { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } };
  assert.equal(formatHPAMetrics([cpu], []), 'cpu: <unknown>/50%');
  assert.equal(formatHPAMetrics([cpu], [{ type: '' }]), 'cpu: <unknown>/50%');
  assert.equal(formatHPAMetrics([cpu], [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 12, averageValue: '60m' } } }]), 'cpu: 12%/50%');
  const mem = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' } } };
  assert.equal(formatHPAMetrics([cpu, mem, cpu], []), 'cpu: <unknown>/50%, memory: <unknown>/100Mi + 1 more...');
  assert.equal(formatHPAMetrics([], []), '<none>');
});
