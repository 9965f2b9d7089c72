// The local cloud and the control plane's cloud controllers, with real processes: `skiff cloud
// serve` runs each instance as a `skiff agent`; `skiff server --cloud-provider local` initialises
// their Nodes from the cloud, deletes the Node of an instance that is gone and taints the Node of
// one shut down. Short timings come from the flags.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestServer, eventually, runSkiff } from '../support/cluster.js';
import { freePorts } from '../support/etcd.js';
import type { ManagedProcess } from '../../src/util/processes.js';
import { killInstanceMachines, startTestCloud } from '../support/cloud.js';
import { CloudApiError, CloudClient } from '../../src/cloud/client.js';
import type { Instance } from '../../src/cloud/api.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { KubeList } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/client/rest.js';

const TOKEN = 'cloudy.0123456789abcdef';

describe('a local cloud and the cloud controllers', () => {
  const s = new TestServer('cloud');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-cloud-'));
  let endpoint = '';
  let cloudProc: ManagedProcess | undefined;
  let cloud: CloudClient;
  let api: ApiClient;

  const startCloud = (): ManagedProcess => startTestCloud(dir, Number(new URL(endpoint).port), s, TOKEN);

  const nodeOf = async (i: Instance): Promise<Node | undefined> => (await api.get<KubeList<Node>>('/api/v1/nodes')).items.find((n) => n.spec?.providerID === i.providerID);
  const ready = (n: Node | undefined): boolean => n?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

  before(async () => {
    const [port] = await freePorts(1);
    endpoint = `http://127.0.0.1:${port!}`;
    await s.start(['--token', TOKEN, '--cloud-provider', 'local', '--cloud-endpoint', endpoint, '--node-monitor-period', '1s', '--node-monitor-grace-period', '4s']);
    api = s.client();
    cloudProc = startCloud();
    cloud = new CloudClient(endpoint);
    await eventually(() => cloud.nodeGroups().then(() => true), 15_000, 'cloud API up');
    await cloud.setNodeGroup('workers', { instanceType: 'small', zones: ['local-a', 'local-b'], minSize: 0, maxSize: 4 });
  });

  after(async () => {
    killInstanceMachines(dir);
    await cloudProc?.stop(3000);
    api?.close();
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs instances whose Nodes the cloud node controller initialises from the cloud', async () => {
    const made = await cloud.createInstances('workers', 2);
    for (const i of made) {
      const node = await eventually(async () => {
        const n = await nodeOf(i);
        return ready(n) && n?.metadata.labels?.['topology.kubernetes.io/zone'] ? n : undefined;
      }, 30_000, `the Node of ${i.id} Ready and initialised`);
      assert.equal(node.metadata.name, i.nodeName);
      assert.equal(node.metadata.labels?.['node.kubernetes.io/instance-type'], 'small');
      assert.equal(node.metadata.labels?.['topology.kubernetes.io/region'], 'local');
      assert.equal(node.metadata.labels?.['topology.kubernetes.io/zone'], i.zone);
      assert.ok(!(node.spec?.taints ?? []).some((t) => t.key === 'node.cloudprovider.kubernetes.io/uninitialized'), 'the uninitialized taint is lifted');
    }
    assert.deepEqual(made.map((i) => i.zone).sort(), ['local-a', 'local-b']);
    const table = await runSkiff(['cloud', 'instances', '--cloud-endpoint', endpoint, '--kubeconfig', s.kubeconfig]);
    assert.equal(table.code, 0, table.stderr);
    for (const i of made) assert.match(table.stdout, new RegExp(`^${i.id}\\s+workers\\s+Running\\s+${i.zone}\\s+${i.nodeName}\\s+Ready\\s+`, 'm'));
  });

  it('refuses what it cannot do with a clear error', async () => {
    await assert.rejects(cloud.createInstances('workers', 3), (e: unknown) => e instanceof CloudApiError && e.code === 409 && /would exceed its maximum size 4/.test(e.message));
    const [i] = await cloud.instances('workers');
    await assert.rejects(cloud.applyFault(i!.id, 'melt' as never), (e: unknown) => e instanceof CloudApiError && e.code === 400 && /unknown fault "melt"/.test(e.message));
    await assert.rejects(cloud.setNodeGroup('Bad_Name', {}), (e: unknown) => e instanceof CloudApiError && e.code === 400);
  });

  it('a deleted Node of a skiff instance comes back; a classic instance stays without one (the zombie of the story)', async () => {
    const [skiffOne] = await cloud.instances('workers');
    await api.delete(`/api/v1/nodes/${skiffOne!.nodeName}`);
    const back = await eventually(async () => {
      const n = await nodeOf(skiffOne!);
      return ready(n) ? n : undefined;
    }, 15_000, 'the Node restored by its agent');
    assert.equal(back.metadata.labels?.['topology.kubernetes.io/zone'], skiffOne!.zone, 'restored with the labels its cloud gave it');
    const [classic] = await cloud.createInstances('workers', 1, ['classic']);
    await eventually(async () => ready(await nodeOf(classic!)), 30_000, 'the classic instance Ready');
    await api.delete(`/api/v1/nodes/${classic!.nodeName}`);
    const table = await eventually(async () => {
      const t = await runSkiff(['cloud', 'instances', '--cloud-endpoint', endpoint, '--kubeconfig', s.kubeconfig]);
      return new RegExp(`^${classic!.id}\\s+workers\\s+Running\\s+\\S+\\s+<none>`, 'm').test(t.stdout) ? t.stdout : undefined;
    }, 10_000, 'the classic instance listed without a Node');
    assert.match(table, new RegExp(`^${classic!.id}\\s.*classic`, 'm'));
    assert.equal(await nodeOf(classic!), undefined, 'a classic agent never re-creates its Node');
    await cloud.deleteInstance(classic!.id);
  });

  it('a lost instance\'s Node is deleted; a shut-down one\'s is tainted and left in place', async () => {
    const [a, b] = (await cloud.instances('workers')).filter((i) => i.state === 'Running' && !i.faults.includes('classic'));
    await cloud.applyFault(a!.id, 'lost');
    await cloud.applyFault(b!.id, 'shutdown');
    await eventually(async () => (await nodeOf(a!)) === undefined, 30_000, 'the lost instance\'s Node deleted');
    const tainted = await eventually(async () => {
      const n = await nodeOf(b!);
      return (n?.spec?.taints ?? []).some((t) => t.key === 'node.cloudprovider.kubernetes.io/shutdown') ? n : undefined;
    }, 30_000, 'the shut-down instance\'s Node tainted');
    assert.ok(!ready(tainted));
    assert.equal(await cloud.instance(a!.id), undefined, 'a lost instance is gone from the cloud');
    assert.equal((await cloud.instance(b!.id))?.state, 'Stopped');
  });

  it('a Ready Node is never left tainted shut down', async () => {
    const [running] = await cloud.createInstances('workers', 1);
    const node = await eventually(async () => {
      const n = await nodeOf(running!);
      return ready(n) ? n : undefined;
    }, 30_000, 'a Ready cloud Node');
    await api.patch(`/api/v1/nodes/${node.metadata.name}`, { spec: { taints: [...(node.spec?.taints ?? []), { key: 'node.cloudprovider.kubernetes.io/shutdown', effect: 'NoSchedule' }] } });
    await eventually(async () => !((await nodeOf(running!))?.spec?.taints ?? []).some((t) => t.key === 'node.cloudprovider.kubernetes.io/shutdown'), 15_000, 'the shutdown taint lifted');
    await cloud.deleteInstance(running!.id);
    await eventually(async () => (await nodeOf(running!)) === undefined, 20_000, 'its Node gone with it');
  });

  it('instances outlive a SIGKILL of the cloud, and a deleted instance takes its Node with it', async () => {
    const [i] = await cloud.createInstances('workers', 1);
    await eventually(async () => ready(await nodeOf(i!)), 30_000, 'Ready');
    cloudProc!.signal('SIGKILL');
    await cloudProc!.exited;
    cloudProc = startCloud();
    await eventually(() => cloud.instance(i!.id).then((x) => x?.state === 'Running'), 15_000, 'the instance listed again');
    assert.ok(ready(await nodeOf(i!)), 'its Node stayed Ready throughout');
    await cloud.deleteInstance(i!.id);
    await eventually(async () => (await cloud.instance(i!.id))?.state === 'Terminated', 20_000, 'Terminated');
    await eventually(async () => (await nodeOf(i!)) === undefined, 10_000, 'its Node gone with it');
    await assert.rejects(api.get(`/api/v1/nodes/${i!.nodeName}`), (e: unknown) => isStatusError(e, 'NotFound'));
  });
});
