// A built-in kind served at several versions (HorizontalPodAutoscaler: autoscaling/v2 stored, v1
// converted): every verb at either version sees the same objects, each in the version asked for,
// watches included, and storage holds the storage version only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { KubeList, KubeObject, WatchEvent } from '../../src/api/types.js';

const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
const V2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';

describe('a built-in kind served at two versions', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  before(async () => {
    srv = await startInProcessServer();
    c = srv.client();
  });
  after(async () => {
    await srv.stop();
  });

  it('create, read, list, patch and watch at either version; stored once, in v2', async () => {
    const created = await c.create<KubeObject>(V1, { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'web' }, spec: { scaleTargetRef: { kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 40 } });
    assert.equal(created.apiVersion, 'autoscaling/v1');
    assert.deepEqual(created.spec, { scaleTargetRef: { kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 40 });
    assert.deepEqual(created.status, { currentReplicas: 0, desiredReplicas: 0 });

    // A watch at v1 from the create on: the writes at either version, as v1 objects.
    const ac = new AbortController();
    const events: WatchEvent[] = [];
    const watching = (async () => {
      for await (const e of c.watch(V1, { resourceVersion: created.metadata.resourceVersion! }, ac.signal)) {
        events.push(e);
        if (events.length === 2) return;
      }
    })();

    const v2 = await c.get<KubeObject>(`${V2}/web`);
    assert.equal(v2.apiVersion, 'autoscaling/v2');
    assert.deepEqual((v2.spec as { metrics: unknown }).metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 40 } } }]);
    assert.equal(v2.metadata.resourceVersion, created.metadata.resourceVersion);

    const list = await c.list<KubeObject>(V1, {});
    assert.deepEqual(list.items.map((o) => (o.spec as { targetCPUUtilizationPercentage?: number }).targetCPUUtilizationPercentage), [40]);
    const list2 = await c.get<KubeList>(V2);
    assert.equal(list2.apiVersion, 'autoscaling/v2');

    // A v2 merge patch shows at v1; a v1 merge patch shows at v2.
    await c.patch(`${V2}/web`, { spec: { maxReplicas: 5 } }, 'merge');
    assert.equal((await c.get<{ spec: { maxReplicas: number } }>(`${V1}/web`)).spec.maxReplicas, 5);
    await c.patch(`${V1}/web`, { spec: { targetCPUUtilizationPercentage: 70 } }, 'merge');
    assert.equal((await c.get<{ spec: { metrics: { resource: { target: { averageUtilization: number } } }[] } }>(`${V2}/web`)).spec.metrics[0]!.resource.target.averageUtilization, 70);

    await watching;
    ac.abort();
    const seen = (e: WatchEvent) => [e.type, e.object.apiVersion, (e.object.spec as { maxReplicas: number }).maxReplicas, (e.object.spec as { targetCPUUtilizationPercentage: number }).targetCPUUtilizationPercentage];
    assert.deepEqual(events.map(seen), [
      ['MODIFIED', 'autoscaling/v1', 5, 40],
      ['MODIFIED', 'autoscaling/v1', 5, 70],
    ]);

    // Storage holds the one object, in the storage version.
    const stored = await srv.store.get('/registry/horizontalpodautoscalers/default/web');
    assert.equal((JSON.parse(Buffer.from(stored!.value).toString()) as KubeObject).apiVersion, 'autoscaling/v2');
  });
});
