// The cluster autoscaler end to end, with a real cloud of agent processes and short timings
// through the flags: pending pods that fit nowhere grow the group, load removed shrinks it back to
// its minimum through taint, drain and instance deletion, and instances that never register a
// Node, or lost theirs to an agent that never re-creates it (the zombie of the story), are replaced.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { TestServer, eventually } from '../support/cluster.js';
import { throughout } from '../support/eventually.js';
import { freePorts } from '../support/etcd.js';
import type { ManagedProcess } from '../../src/util/processes.js';
import { killInstanceMachines, startTestCloud } from '../support/cloud.js';
import { CloudClient } from '../../src/cloud/client.js';
import type { Instance } from '../../src/cloud/api.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import type { ApiClient } from '../../src/client/rest.js';

const TOKEN = 'scaler.0123456789abcdef';

describe('cluster autoscaler on a local cloud', () => {
  const s = new TestServer('autoscaler');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-autoscaler-'));
  let cloudProc: ManagedProcess | undefined;
  let cloud: CloudClient;
  let api: ApiClient;

  const live = async (): Promise<Instance[]> => (await cloud.instances('pool')).filter((i) => i.state !== 'Terminated');
  const nodes = async (): Promise<Node[]> => (await api.get<KubeList<Node>>('/api/v1/nodes')).items.filter((n) => n.spec?.providerID?.startsWith('skiff://pool/'));
  const readyCount = async (): Promise<number> => (await nodes()).filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
  const runningPods = async (): Promise<Pod[]> => (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=crunch' } })).items.filter((p) => p.status?.phase === 'Running');
  /** At rest, every live instance has its Node and every Node its instance. */
  const matched = async (): Promise<boolean> => {
    const [is, ns] = await Promise.all([live(), nodes()]);
    return is.length === ns.length && is.every((i) => ns.some((n) => n.spec?.providerID === i.providerID));
  };

  before(async () => {
    const [port] = await freePorts(1);
    const endpoint = `http://127.0.0.1:${port!}`;
    await s.start([
      '--token', TOKEN, '--cloud-provider', 'local', '--cloud-endpoint', endpoint, '--nodes', '1:3:pool',
      '--scan-interval', '1s', '--scale-down-unneeded-time', '3s', '--scale-down-delay-after-add', '3s', '--max-node-provision-time', '8s',
      '--initial-node-group-backoff-duration', '4s', '--node-monitor-period', '1s', '--node-monitor-grace-period', '6s', '--pod-gc-orphan-quarantine', '2s',
    ]);
    api = s.client();
    cloudProc = startTestCloud(dir, port!, s, TOKEN);
    cloud = new CloudClient(endpoint);
    await eventually(() => cloud.nodeGroups().then(() => true), 15_000, 'cloud API up');
    await cloud.setNodeGroup('pool', { instanceType: 'small', zones: ['local-a'], minSize: 1, maxSize: 3 });
    await cloud.createInstances('pool', 1);
    await eventually(async () => (await readyCount()) === 1, 30_000, 'the first node Ready');
  });

  after(async () => {
    killInstanceMachines(dir);
    await cloudProc?.stop(3000);
    api?.close();
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('grows the group for pods that fit nowhere, and the pods run on the new nodes', async () => {
    // Each pod asks for most of a small instance's 2 cpus: one per node.
    await s.k(['apply', '-f', '-'], {
      input: `apiVersion: apps/v1
kind: Deployment
metadata: {name: crunch}
spec:
  replicas: 3
  selector: {matchLabels: {app: crunch}}
  template:
    metadata: {labels: {app: crunch}}
    spec:
      containers:
      - name: crunch
        image: busybox
        command: [sleep, "3600"]
        resources: {requests: {cpu: 1500m, memory: 256Mi}}
`,
    });
    await eventually(async () => (await runningPods()).length === 3, 60_000, 'three pods Running');
    assert.equal((await live()).length, 3);
    assert.equal(await readyCount(), 3);
    const events = await api.get<KubeList<KubeObject & { reason?: string; message?: string }>>('/api/v1/namespaces/default/events', { query: { fieldSelector: 'reason=TriggeredScaleUp' } });
    assert.ok(events.items.some((e) => /pod triggered scale-up: \[\{pool \d->\d \(max: 3\)\}\]/.test(e.message ?? '')), 'TriggeredScaleUp events on the pods');
    const status = await api.get<KubeObject & { data: { status: string } }>('/api/v1/namespaces/kube-system/configmaps/cluster-autoscaler-status');
    const parsed = parseYaml(status.data.status) as { autoscalerStatus: string; nodeGroups: { name: string; health: { cloudProviderTarget: number; maxSize: number } }[] };
    assert.equal(parsed.autoscalerStatus, 'Running');
    assert.equal(parsed.nodeGroups[0]?.health.maxSize, 3);
    // The gauges are set once per scan interval: the loop after the three nodes came up reports them.
    const metrics = await eventually(async () => {
      const text = String(await api.get<string>('/metrics'));
      return /^cluster_autoscaler_nodes_count\{state="ready"\} 3$/m.test(text) ? text : undefined;
    }, 10_000, 'cluster_autoscaler_nodes_count{state="ready"} 3');
    assert.match(metrics, /^cluster_autoscaler_scaled_up_nodes_total 2$/m);
  });

  it('at the maximum, a pod that fits nowhere says so and the group stays', async () => {
    await s.k(['scale', 'deployment', 'crunch', '--replicas', '4']);
    const said = await eventually(async () => {
      const ev = await api.get<KubeList<KubeObject & { message?: string }>>('/api/v1/namespaces/default/events', { query: { fieldSelector: 'reason=NotTriggerScaleUp' } });
      return ev.items.find((e) => /max node group size reached/.test(e.message ?? ''));
    }, 20_000, 'NotTriggerScaleUp');
    assert.ok(said);
    assert.equal((await live()).length, 3);
  });

  it('a deleted autoscaled Node comes back, and the autoscaler neither adds nor removes an instance for it', async () => {
    const before = (await live()).map((i) => i.id).sort();
    const podsBefore = (await runningPods()).map((p) => p.metadata.uid).sort();
    const victim = (await nodes())[0]!;
    await s.k(['delete', 'node', victim.metadata.name!]);
    await eventually(async () => (await nodes()).some((n) => n.metadata.name === victim.metadata.name && n.metadata.uid !== victim.metadata.uid), 10_000, 'the Node re-created by its agent');
    // Several scan intervals and past the provision time's share of it: the set of instances stays.
    await throughout(async () => JSON.stringify((await live()).map((i) => i.id).sort()) === JSON.stringify(before), 5_000, 'the same instances');
    assert.deepEqual((await runningPods()).map((p) => p.metadata.uid).sort(), podsBefore, 'the pods kept running where they were');
    assert.ok(await matched());
  });

  it('shrinks back to the minimum when the load goes, without leaking an instance or a Node', async () => {
    await s.k(['scale', 'deployment', 'crunch', '--replicas', '1']);
    await eventually(async () => (await live()).length === 1 && (await nodes()).length === 1, 60_000, 'one instance and one Node left');
    await eventually(matched, 15_000, 'instances and Nodes one to one');
    assert.equal((await runningPods()).length, 1);
  });

  it('a PodDisruptionBudget without room holds back the scale-down that would break it', async () => {
    const [extra] = await cloud.createInstances('pool', 1);
    await eventually(async () => (await readyCount()) === 2, 30_000, 'a second node Ready');
    // The guarded pod lands on the new node (the other is cordoned meanwhile), then could move back.
    const first = (await nodes()).find((n) => n.spec?.providerID !== extra!.providerID)!;
    await s.k(['cordon', first.metadata.name!]);
    await s.k(['create', 'deployment', 'guarded', '--image', 'busybox', '--', 'sleep', '3600']);
    await s.k(['create', 'pdb', 'guarded', '--selector', 'app=guarded', '--min-available', '1']);
    await eventually(async () => (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=guarded' } })).items.some((p) => p.status?.phase === 'Running'), 30_000, 'the guarded pod Running');
    await s.k(['uncordon', first.metadata.name!]);
    // Well past the unneeded time, the underused node stays: evicting its pod would break the budget.
    await throughout(async () => (await live()).length === 2 && !(await nodes()).some((n) => (n.spec?.taints ?? []).some((t) => t.key === 'ToBeDeletedByClusterAutoscaler')), 8_000, 'both instances kept, nothing tainted');
    await s.k(['delete', 'pdb', 'guarded']);
    await eventually(async () => (await live()).length === 1 && (await nodes()).length === 1, 60_000, 'the node goes once the budget does');
    await eventually(async () => (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=guarded' } })).items.some((p) => p.status?.phase === 'Running'), 30_000, 'the guarded pod Running again elsewhere');
    await s.k(['delete', 'deployment', 'guarded']);
  });

  it('replaces an instance that never boots, and the zombie a classic agent leaves behind', async () => {
    const [noBoot] = await cloud.createInstances('pool', 1, ['no-boot']);
    await eventually(async () => (await cloud.instance(noBoot!.id))?.state === 'Terminated', 30_000, 'the never-booting instance deleted');
    await eventually(async () => {
      const timedOut = await api.get<KubeList<KubeObject & { message?: string }>>('/api/v1/namespaces/kube-system/events', { query: { fieldSelector: 'reason=ScaleUpTimedOut' } });
      return timedOut.items.some((e) => /group pool failed to register/.test(e.message ?? ''));
    }, 10_000, 'the group backs off, and says why');
    const [classic] = await cloud.createInstances('pool', 1, ['classic']);
    await eventually(async () => (await nodes()).some((n) => n.spec?.providerID === classic!.providerID), 30_000, 'the classic instance registered');
    await api.delete(`/api/v1/nodes/${classic!.nodeName}`);
    await eventually(async () => (await cloud.instance(classic!.id))?.state === 'Terminated', 40_000, 'the zombie instance reaped');
    await eventually(matched, 30_000, 'instances and Nodes one to one again');
  });

  it('a lost machine\'s Node is deleted and its pods are replaced on a new instance', async () => {
    const [node] = await nodes();
    const [pod] = await runningPods();
    assert.equal(pod!.spec?.nodeName, node!.metadata.name, 'the one crunch pod runs on the one node');
    const lost = (await live()).find((i) => i.providerID === node!.spec?.providerID)!;
    await cloud.applyFault(lost.id, 'lost');
    await eventually(async () => !(await nodes()).some((n) => n.metadata.name === node!.metadata.name), 40_000, 'the lost machine\'s Node deleted');
    const replaced = await eventually(async () => (await runningPods()).find((p) => p.metadata.uid !== pod!.metadata.uid), 90_000, 'the pod replaced and Running');
    assert.notEqual(replaced.spec?.nodeName, node!.metadata.name);
    await eventually(matched, 30_000, 'instances and Nodes one to one again');
    assert.equal((await live()).length, 1, 'back at the minimum, nothing leaked');
  });
});
