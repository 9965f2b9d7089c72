// The resource quota controller against a real in-process API server: what its header promises
// (a new quota counted, a finished pod and a deleted object given back, a wrong count corrected by
// the periodic recount), seen through the quota's status as `kubectl get quota` shows it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { ResourceQuotaController } from '../../src/controllers/resource-quota.js';
import { eventually, nsPath, startControllers, startHarness, type Harness, type RunningControllers } from './workload-harness.js';

describe('resource quota controller', () => {
  let h: Harness;
  let running: RunningControllers;
  before(async () => {
    h = await startHarness();
    // A resync of a fifth of a second stands for upstream's five minutes.
    running = startControllers(h.client, [new ResourceQuotaController(200)]);
  });
  after(async () => {
    running.stop();
    await h.close();
  });

  const quotaPath = (ns: string, name = 'q') => nsPath(ns, 'resourcequotas', name, 'v1');
  const used = async (ns: string) => ((await h.client.get<KubeObject>(quotaPath(ns))).status as { used?: Record<string, string> } | undefined)?.used;
  const pod = (name: string, cpu: string) => ({ metadata: { name }, spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu }, limits: { cpu } } }] } });

  it('counts what a namespace already holds once a quota appears, and gives back a finished pod', async () => {
    const ns = await h.namespace('quota');
    await h.client.create(nsPath(ns, 'pods', undefined, 'v1'), pod('a', '250m'));
    await h.client.create(nsPath(ns, 'configmaps', undefined, 'v1'), { metadata: { name: 'cm' } });
    await h.client.create(nsPath(ns, 'resourcequotas', undefined, 'v1'), { metadata: { name: 'q' }, spec: { hard: { pods: '5', 'requests.cpu': '2', 'count/configmaps': '10' } } });
    await eventually(async () => {
      const u = await used(ns);
      return u?.pods === '1' && u['requests.cpu'] === '250m' && u['count/configmaps'] === '1';
    }, 5000, 'the quota counted');
    const live = await h.client.get<KubeObject>(nsPath(ns, 'pods', 'a', 'v1'));
    await h.client.replace(`${nsPath(ns, 'pods', 'a', 'v1')}/status`, { ...live, status: { phase: 'Succeeded' } });
    await eventually(async () => (await used(ns))?.pods === '0', 5000, 'the finished pod given back');
    await h.client.delete(nsPath(ns, 'configmaps', 'cm', 'v1'));
    await eventually(async () => (await used(ns))?.['count/configmaps'] === '0', 5000, 'the deleted ConfigMap given back');
  });

  it('corrects a charge that no object stands for at its periodic recount', async () => {
    const ns = await h.namespace('quota');
    await h.client.create(nsPath(ns, 'resourcequotas', undefined, 'v1'), { metadata: { name: 'q' }, spec: { hard: { pods: '5' } } });
    await eventually(async () => (await used(ns))?.pods === '0', 5000, 'the quota counted');
    // What admission leaves behind when a charged write then fails: used above what is there.
    const q = await h.client.get<KubeObject>(quotaPath(ns));
    await h.client.replace(`${quotaPath(ns)}/status`, { ...q, status: { hard: { pods: '5' }, used: { pods: '3' } } });
    await eventually(async () => (await used(ns))?.pods === '0', 5000, 'the recount to correct the charge');
    assert.deepEqual((await h.client.get<KubeObject>(quotaPath(ns))).status, { hard: { pods: '5' }, used: { pods: '0' } });
  });
});
