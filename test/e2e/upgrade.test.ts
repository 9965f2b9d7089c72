// A rolling upgrade from the previous release (the newest tag before HEAD, else the previous
// commit) to this one: three members on etcd, one at a time, then each agent restarted in place
// (SIGUSR2: pods and Node kept) on the new binary — while every node stays Ready at every sample
// and every pod keeps its uid. This is the version-skew policy's promise, exercised.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { HA_SERVER_FLAGS, HaCluster, nodeReadiness, type HaAgent, type SkiffLauncher } from '../support/ha.js';
import { SKIFF_BIN, containerPids, eventually } from '../support/cluster.js';
import { buildPreviousRelease, type PreviousBuild } from '../support/previous-build.js';
import { startProcess } from '../../src/util/processes.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';


describe('rolling upgrade from the previous release', () => {
  let previous: PreviousBuild | { unavailable: string };
  let bin = SKIFF_BIN;
  const launch: SkiffLauncher = (name, skiffArgs, logFile, nodeArgs) => startProcess({ name, command: process.execPath, args: [...nodeArgs, bin, ...skiffArgs], output: logFile });
  let ha: HaCluster | undefined;
  let agents: HaAgent[] = [];
  let client: ApiClient;

  before(() => {
    previous = buildPreviousRelease();
  });
  after(async () => {
    // Gracefully first: the process runtime's containers go with their agent's graceful exit, not with a SIGKILL.
    await Promise.all(agents.map((a) => a.stop().catch(() => {})));
    await ha?.destroy();
    if ('dir' in previous) rmSync(previous.dir, { recursive: true, force: true });
  });

  async function podUids(): Promise<string[]> {
    const list = await client.get<KubeList>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=steady' } });
    return list.items.filter((p) => ((p.status ?? {}) as { phase?: string }).phase === 'Running').map((p) => p.metadata.uid!).sort();
  }

  it('upgrades members one at a time and agents in place without a NotReady node or a moved pod', async (t) => {
    if ('unavailable' in previous) return t.skip(`no previous release to upgrade from: ${previous.unavailable}`);
    console.log(`upgrading from ${previous.rev}`);
    bin = previous.bin;
    ha = await HaCluster.start({ serverFlags: HA_SERVER_FLAGS, launch });
    client = ha.client();
    agents = ['up-1', 'up-2'].map((n) => ha!.agent(n));
    const servers = ha.members.map((m) => m.url);
    // One node runs real processes: an upgrade must hand them over, not restart them.
    const runtimeOf = (a: HaAgent) => (a.nodeName === 'up-1' ? ['--runtime', 'process'] : []);
    for (const a of agents) a.start(servers, runtimeOf(a));
    await eventually(async () => [...(await nodeReadiness(client)).values()].filter((s) => s === 'True').length === 2, 45_000, 'both old agents Ready');
    await client.create('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'steady' },
      spec: { replicas: 4, selector: { matchLabels: { app: 'steady' } }, template: { metadata: { labels: { app: 'steady' } }, spec: { containers: [{ name: 'c', image: 'x', command: ['sleep', '3600'] }] } } },
    });
    await eventually(async () => (await podUids()).length === 4, 30_000, '4 pods Running');
    const before = await podUids();
    const proc = await client.create<KubeObject>('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'host-process' },
      spec: { nodeName: 'up-1', containers: [{ name: 'c', image: 'x', command: ['sleep', '3600'] }] },
    });
    await eventually(async () => ((await client.get<KubeObject>('/api/v1/namespaces/default/pods/host-process')).status as { phase?: string } | undefined)?.phase === 'Running', 20_000, 'the host process runs');
    const pids = containerPids(proc.metadata.uid!);
    assert.equal(pids.length, 1);

    // Every node's Ready condition, twice a second, for the whole upgrade.
    const samples: Map<string, string>[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        samples.push(await nodeReadiness(client).catch(() => new Map<string, string>([['(no answer)', 'error']])));
        await new Promise((r) => setTimeout(r, 500));
      }
    })();

    bin = SKIFF_BIN;
    for (const m of ha.members) {
      await m.stop();
      m.start();
      await m.waitReady(ha.caPem);
    }
    for (const a of agents) {
      a.proc?.signal('SIGUSR2');
      await a.proc?.exited;
      a.start(servers, runtimeOf(a));
      await eventually(() => a.logs().split('"agent started"').length >= 3, 20_000, `${a.nodeName} restarted on the new binary`);
    }
    // A few more seconds: a lapse in the new agents' heartbeats would show now.
    await new Promise((r) => setTimeout(r, 8000));
    sampling = false;
    await sampler;

    for (const n of ['up-1', 'up-2']) {
      const bad = samples.map((s, i) => [i, s.get(n)] as const).filter(([, v]) => v !== 'True');
      assert.deepEqual(bad, [], `${n} Ready at every one of ${samples.length} samples`);
    }
    assert.deepEqual(await podUids(), before, 'the same pods, never moved or replaced');
    assert.deepEqual(containerPids(proc.metadata.uid!), pids, 'the same host process, adopted by the new agent');
    await client.delete('/api/v1/namespaces/default/pods/host-process');
    await eventually(() => containerPids(proc.metadata.uid!).length === 0, 40_000, 'the adopted process stopped when its pod was deleted');
    for (const m of ha.members) assert.match(m.logs(), /API server listening/);
  });
});
