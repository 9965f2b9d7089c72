// HorizontalPodAutoscaler as a user meets it, against a real server and real kubectl (1.27 and
// 1.33): `kubectl autoscale` creates one (kubectl picks autoscaling/v1 or v2; both are served, v2
// preferred and stored), `kubectl get hpa` shows upstream's columns, and while its pods have no
// metrics (no metrics API served, or no node runs them) the controller says so as upstream's
// does: TARGETS `<unknown>/50%`, ScalingActive False with FailedGetResourceMetric, and the Event
// of that name. The same object read at v1 carries v2's conditions in the
// autoscaling.alpha.kubernetes.io/conditions annotation; bad specs get upstream's validation
// messages.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer, eventually } from '../support/cluster.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { KubeObject } from '../../src/api/types.js';

interface Hpa extends KubeObject {
  spec: { minReplicas?: number; maxReplicas: number; targetCPUUtilizationPercentage?: number; metrics?: unknown[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; currentMetrics?: unknown[]; desiredReplicas?: number };
}

describe('HorizontalPodAutoscaler: autoscaling/v1 and v2, kubectl autoscale, the controller without metrics', () => {
  const s = new TestServer('hpa');
  let api: ApiClient;

  before(async () => {
    await s.start();
    api = s.client();
  });

  after(async () => {
    api?.close();
    await s.stop();
    s.cleanup();
  });

  it('discovery lists autoscaling/v2 (preferred) and v1, with the hpa short name and the all category', async () => {
    const versions = await s.k(['api-versions']);
    assert.match(versions, /^autoscaling\/v1$/m);
    assert.match(versions, /^autoscaling\/v2$/m);
    const group = await api.get<{ preferredVersion: { version: string } }>('/apis/autoscaling');
    assert.equal(group.preferredVersion.version, 'v2');
    const resources = await s.k(['api-resources', '--api-group=autoscaling', '--no-headers']);
    assert.match(resources, /^horizontalpodautoscalers\s+hpa\s+autoscaling\/v2\s+true\s+HorizontalPodAutoscaler$/m);
  });

  for (const version of ['1.27', '1.33']) {
    it(`kubectl ${version} autoscale: TARGETS <unknown>/50% and ScalingActive False (FailedGetResourceMetric) while its pods have no metrics`, async () => {
      const name = `web-${version.replace('.', '')}`;
      await s.k(['create', 'deployment', name, '--image=busybox'], { version });
      await s.k(['autoscale', 'deployment', name, '--cpu-percent=50', '--min=1', '--max=5'], { version });
      const hpa = await api.get<Hpa>(`/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/${name}`);
      assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
      const active = await eventually(
        async () => (await api.get<Hpa>(`/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/${name}`)).status?.conditions?.find((c) => c.type === 'ScalingActive'),
        20_000,
        'ScalingActive condition',
      );
      assert.equal(active.status, 'False');
      assert.equal(active.reason, 'FailedGetResourceMetric');
      // No metrics API: upstream's words for a cluster without metrics-server. Where the server
      // serves one, these pods (no node runs them) have no figures yet: metrics-server's answer then.
      const metricsServed = /^metrics\.k8s\.io\/v1beta1$/m.test(await s.k(['api-versions']));
      const why = metricsServed
        ? 'no metrics returned from resource metrics API'
        : 'unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)';
      assert.equal(active.message, `the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: ${why}`);
      const table = await s.k(['get', 'hpa', name], { version });
      const [header, row] = table.trim().split('\n');
      assert.match(header!, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/);
      assert.match(row!, new RegExp(`^${name}\\s+Deployment/${name}\\s+cpu: <unknown>/50%\\s+1\\s+5\\s+1\\s+\\S+$`));
      const events = await eventually(async () => {
        const out = await s.k(['get', 'events', '--field-selector', `involvedObject.name=${name},involvedObject.kind=HorizontalPodAutoscaler`, '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}']);
        return out.includes('FailedGetResourceMetric') ? out : undefined;
      }, 20_000, 'FailedGetResourceMetric event');
      assert.match(events, /FailedComputeMetricsReplicas/);
    });
  }

  it('the v1 view converts: targetCPUUtilizationPercentage, and the conditions in their annotation', async () => {
    const v1 = await api.get<Hpa>('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web-127');
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 50);
    assert.equal(v1.spec.metrics, undefined);
    const conditions = JSON.parse(v1.metadata.annotations?.['autoscaling.alpha.kubernetes.io/conditions'] ?? '[]') as { type: string }[];
    assert.deepEqual(conditions.map((c) => c.type), ['AbleToScale', 'ScalingActive']);
    // A v1 write keeps what only v2 can say: behaviour set through v2 survives a v1 update.
    await api.patch('/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web-127', { spec: { behavior: { scaleDown: { stabilizationWindowSeconds: 30 } } } }, 'merge');
    const before = await api.get<Hpa>('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web-127');
    await api.replace('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web-127', { ...before, spec: { ...before.spec, maxReplicas: 7 } });
    const v2 = await api.get<Hpa & { spec: { behavior?: { scaleDown?: { stabilizationWindowSeconds?: number; policies?: unknown[] }; scaleUp?: { policies?: unknown[] } } } }>(
      '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web-127',
    );
    assert.equal(v2.spec.maxReplicas, 7);
    assert.equal(v2.spec.behavior?.scaleDown?.stabilizationWindowSeconds, 30);
    assert.deepEqual(v2.spec.behavior?.scaleDown?.policies, [{ type: 'Percent', value: 100, periodSeconds: 15 }]);
    assert.deepEqual(v2.spec.behavior?.scaleUp?.policies, [
      { type: 'Pods', value: 4, periodSeconds: 15 },
      { type: 'Percent', value: 100, periodSeconds: 15 },
    ]);
  });

  it("a bad spec gets upstream's validation messages", async () => {
    const r = await s.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'bad' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 3, maxReplicas: 2, behavior: { scaleUp: { selectPolicy: 'Fastest' } } },
      }),
    });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'The HorizontalPodAutoscaler "bad" is invalid: \n* spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`\n* spec.behavior.scaleUp.selectPolicy: Unsupported value: "Fastest": supported values: "Disabled", "Max", "Min"\n',
    );
    const v1 = await s.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad1' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 2, targetCPUUtilizationPercentage: 0 } }),
    });
    assert.equal(v1.code, 1);
    assert.match(v1.stderr, /spec\.metrics\[0\]\.resource\.target\.averageUtilization: Invalid value: 0: must be greater than 0/);
  });
});
