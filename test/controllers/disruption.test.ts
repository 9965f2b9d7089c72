import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PdbStatus } from '../../src/api/disruption-budget.js';
import type { KubeObject } from '../../src/api/types.js';
import { DisruptionController } from '../../src/controllers/disruption.js';
import { eventually, nsPath, startControllers, startHarness, type Harness } from './workload-harness.js';

describe('disruption controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const v1 = (ns: string, resource: string, name?: string) => nsPath(ns, resource, name, 'v1');
  const pdbPath = (ns: string, name?: string) => nsPath(ns, 'poddisruptionbudgets', name, 'policy/v1');
  async function pod(ns: string, name: string, ready: boolean): Promise<void> {
    await h.client.create(v1(ns, 'pods'), { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { nodeName: 'node-a', containers: [{ name: 'c', image: 'x' }] } });
    await h.client.patch(`${v1(ns, 'pods', name)}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] } }, 'merge');
  }
  const status = async (ns: string, name: string) => ((await h.client.get<KubeObject>(pdbPath(ns, name))).status ?? {}) as PdbStatus;
  const view = (s: PdbStatus) =>
    `expected ${s.expectedPods} healthy ${s.currentHealthy} desired ${s.desiredHealthy} allowed ${s.disruptionsAllowed} ` +
    `${s.conditions?.map((c) => `${c.type}=${c.status}/${c.reason}`).join(',')} disrupted ${Object.keys(s.disruptedPods ?? {}).join(',') || '-'}`;

  it('reports what an eviction is allowed now, follows the pods, and drops evictions carried out or never carried out', async () => {
    const ns = await h.namespace('pdb');
    const running = startControllers(h.client, [new DisruptionController()]);
    try {
      await pod(ns, 'web-1', true);
      await pod(ns, 'web-2', true);
      await pod(ns, 'web-3', false);
      await h.client.create(pdbPath(ns), { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'web' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } });
      await eventually(async () => view(await status(ns, 'web')) === 'expected 3 healthy 2 desired 1 allowed 1 DisruptionAllowed=True/SufficientPods disrupted -', 5000, 'first status');
      assert.equal((await status(ns, 'web')).observedGeneration, 1);

      // A spec change is observed; too few healthy pods flips the condition.
      await h.client.patch(pdbPath(ns, 'web'), { spec: { minAvailable: 3 } }, 'merge');
      await eventually(async () => view(await status(ns, 'web')) === 'expected 3 healthy 2 desired 3 allowed 0 DisruptionAllowed=False/InsufficientPods disrupted -', 5000, 'after spec change');
      assert.equal((await status(ns, 'web')).observedGeneration, 2);
      await h.client.patch(`${v1(ns, 'pods', 'web-3')}/status`, { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'strategic');
      await eventually(async () => view(await status(ns, 'web')) === 'expected 3 healthy 3 desired 3 allowed 0 DisruptionAllowed=False/InsufficientPods disrupted -', 5000, 'pod became ready');

      // Evictions recorded by the API: one whose pod is gone, one never carried out (too old), one in flight.
      await h.client.patch(pdbPath(ns, 'web'), { spec: { minAvailable: 1 } }, 'merge');
      await eventually(async () => view(await status(ns, 'web')) === 'expected 3 healthy 3 desired 1 allowed 2 DisruptionAllowed=True/SufficientPods disrupted -', 5000, 'budget relaxed');
      const recent = new Date(Date.now() - 5_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const old = new Date(Date.now() - 10 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const cur = await h.client.get<KubeObject>(pdbPath(ns, 'web'));
      await h.client.replace(`${pdbPath(ns, 'web')}/status`, { ...cur, status: { ...(cur.status ?? {}), disruptedPods: { 'web-1': recent, 'web-2': old, gone: recent } } });
      await eventually(async () => view(await status(ns, 'web')) === 'expected 3 healthy 2 desired 1 allowed 1 DisruptionAllowed=True/SufficientPods disrupted web-1', 5000, 'stale evictions dropped');
      await h.client.delete(v1(ns, 'pods', 'web-1'), { gracePeriodSeconds: 0 });
      await eventually(async () => view(await status(ns, 'web')) === 'expected 2 healthy 2 desired 1 allowed 1 DisruptionAllowed=True/SufficientPods disrupted -', 5000, 'carried-out eviction dropped');
    } finally {
      running.stop();
    }
  });
});
