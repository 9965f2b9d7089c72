// Controllers and scheduler end to end: a real server and real agents (simulated runtime), short
// timings through the flags, real kubectl.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer, TestAgent, TEST_JOIN_TOKEN, eventually } from '../support/cluster.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

const SERVER_FLAGS = [
  '--token', TEST_JOIN_TOKEN,
  '--node-monitor-period', '500ms',
  '--node-monitor-grace-period', '4s',
  '--node-startup-grace-period', '6s',
  '--default-unreachable-toleration-seconds', '3',
  '--default-not-ready-toleration-seconds', '3',
  '--leader-elect-lease-duration', '3s',
  '--leader-elect-renew-deadline', '2s',
  '--leader-elect-retry-period', '500ms',
];

interface PodView {
  name: string;
  node: string;
  phase: string;
  terminating: boolean;
  owner: string;
}

describe('controllers and scheduler with real agents', () => {
  const s = new TestServer('controllers');
  const agents = ['node-1', 'node-2', 'node-3'].map((n) => new TestAgent(s, n));
  const late = new TestAgent(s, 'node-4');
  before(async () => {
    await s.start(SERVER_FLAGS);
    await Promise.all(agents.map((a) => a.start(['--runtime', 'simulated'])));
  });
  after(async () => {
    for (const a of [...agents, late]) await a.stop().catch(() => {});
    await s.stop();
    s.cleanup();
  });

  async function pods(selector: string): Promise<PodView[]> {
    const c = s.client();
    try {
      const list = await c.get<KubeList>('/api/v1/namespaces/default/pods', { query: { labelSelector: selector } });
      return list.items.map((p) => ({
        name: p.metadata.name!,
        node: ((p.spec ?? {}) as { nodeName?: string }).nodeName ?? '',
        phase: ((p.status ?? {}) as { phase?: string }).phase ?? '',
        terminating: !!p.metadata.deletionTimestamp,
        owner: p.metadata.ownerReferences?.[0]?.kind ?? '',
      }));
    } finally {
      c.close();
    }
  }

  const running = (ps: PodView[]) => ps.filter((p) => p.phase === 'Running' && !p.terminating);

  it('spreads 6 replicas over 3 nodes, 2 each', async () => {
    await s.k(['create', 'deployment', 'web', '--image=nginx:1.27', '--replicas=6']);
    await eventually(async () => running(await pods('app=web')).length === 6, 30_000, '6 running replicas');
    const perNode = new Map<string, number>();
    for (const p of running(await pods('app=web'))) perNode.set(p.node, (perNode.get(p.node) ?? 0) + 1);
    assert.deepEqual([...perNode.values()].sort(), [2, 2, 2]);
    assert.match(await s.k(['rollout', 'status', 'deployment/web', '--timeout=30s']), /successfully rolled out/);
    assert.match(await s.k(['get', 'events', '--field-selector', 'reason=Scheduled']), /Successfully assigned default\/web-/);
  });

  it('kubectl expose: the Service gets Endpoints listing its ready pods', async () => {
    await s.k(['expose', 'deployment', 'web', '--port=80', '--target-port=8080']);
    await eventually(async () => {
      const names = (await s.k(['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[*].addresses[*].targetRef.name}'])).trim().split(/\s+/).filter(Boolean);
      return names.length === 6 && names.every((n) => n.startsWith('web-'));
    }, 30_000, 'six ready addresses');
    assert.match(await s.k(['get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[0].ports[0].port}']), /^8080$/);
    assert.match(await s.k(['describe', 'service', 'web']), /Endpoints:\s+\S+:8080/);
  });

  it('covers every node with a DaemonSet, including one that joins later', async () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agentd' },
      spec: { selector: { matchLabels: { app: 'agentd' } }, template: { metadata: { labels: { app: 'agentd' } }, spec: { containers: [{ name: 'a', image: 'busybox' }] } } },
    };
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(ds) });
    await eventually(async () => running(await pods('app=agentd')).length === 3, 30_000, 'a DaemonSet pod per node');
    await late.start(['--runtime', 'simulated']);
    await eventually(async () => running(await pods('app=agentd')).some((p) => p.node === 'node-4'), 30_000, 'the late node got its pod');
    assert.equal(new Set(running(await pods('app=agentd')).map((p) => p.node)).size, 4);
  });

  it('replaces the pods of a SIGKILLed node after their toleration and keeps its DaemonSet pod', async () => {
    const victim = agents[1]!;
    const before = await pods('app=web');
    const onVictim = before.filter((p) => p.node === victim.nodeName && !p.terminating).map((p) => p.name);
    assert.ok(onVictim.length > 0, 'the victim runs web pods');
    victim.kill('SIGKILL');
    await eventually(async () => /^node-2\s+NotReady/m.test(await s.k(['get', 'nodes'])), 20_000, 'node-2 NotReady');
    const node = JSON.parse(await s.k(['get', 'node', 'node-2', '-o', 'json'])) as KubeObject;
    const taints = ((node.spec as { taints?: { key: string; effect: string }[] }).taints ?? []).map((t) => `${t.key}:${t.effect}`);
    assert.ok(taints.includes('node.kubernetes.io/unreachable:NoSchedule'), taints.join());
    await eventually(
      async () => {
        const n = JSON.parse(await s.k(['get', 'node', 'node-2', '-o', 'json'])) as KubeObject;
        return ((n.spec as { taints?: { key: string; effect: string }[] }).taints ?? []).some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute');
      },
      20_000,
      'unreachable NoExecute taint',
    );
    await eventually(
      async () => {
        const now = await pods('app=web');
        const victimsGone = onVictim.every((n) => now.find((p) => p.name === n)?.terminating !== false);
        return victimsGone && running(now).filter((p) => p.node !== victim.nodeName).length === 6;
      },
      40_000,
      'web pods evicted from node-2 and replaced elsewhere',
    );
    const dsPods = await pods('app=agentd');
    assert.ok(dsPods.some((p) => p.node === victim.nodeName && !p.terminating), 'the DaemonSet pod on node-2 is kept');
  });

  it('completes a rollout, also across a server restart', async () => {
    await s.k(['set', 'image', 'deployment/web', 'nginx=nginx:1.28']);
    assert.match(await s.k(['rollout', 'status', 'deployment/web', '--timeout=60s']), /successfully rolled out/);
    await s.k(['set', 'image', 'deployment/web', 'nginx=nginx:1.29']);
    await s.stop();
    await s.start(SERVER_FLAGS);
    try {
      assert.match(await s.k(['rollout', 'status', 'deployment/web', '--timeout=90s']), /successfully rolled out/);
    } catch (e) {
      const state = await s.k(['get', 'deploy,rs,pods,nodes', '-o', 'wide']).catch(String);
      const events = await s.k(['get', 'events', '--sort-by=.lastTimestamp']).catch(String);
      throw new Error(`${(e as Error).message}\n${state}\n${events.split('\n').slice(-40).join('\n')}`);
    }
    const images = (await s.k(['get', 'pods', '-l', 'app=web', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].image}{" "}{.metadata.deletionTimestamp}{"\\n"}{end}']))
      .split('\n')
      .filter((l) => l.trim() && !/T\d/.test(l));
    assert.ok(images.length >= 6 && images.every((l) => l.startsWith('nginx:1.29')), images.join('|'));
    assert.match(await s.k(['rollout', 'history', 'deployment/web']), /^3\s/m);
  });

  it('keeps DaemonSet revisions: kubectl rollout history, history --revision and undo', async () => {
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'logd' },
      spec: { selector: { matchLabels: { app: 'logd' } }, template: { metadata: { labels: { app: 'logd' } }, spec: { containers: [{ name: 'l', image: 'busybox:1.36' }] } } },
    };
    await s.k(['create', '-f', '-'], { input: JSON.stringify(ds) });
    assert.match(await s.k(['rollout', 'status', 'ds/logd', '--timeout=60s']), /successfully rolled out/);
    await s.k(['set', 'image', 'ds/logd', 'l=busybox:1.37']);
    assert.match(await s.k(['rollout', 'status', 'ds/logd', '--timeout=60s']), /successfully rolled out/);
    const history = await s.k(['rollout', 'history', 'ds/logd']);
    assert.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/, history);
    assert.match(await s.k(['rollout', 'history', 'ds/logd', '--revision=1']), /Image:\s+busybox:1\.36/);
    assert.match(await s.k(['rollout', 'undo', 'ds/logd']), /daemonset.apps\/logd rolled back/);
    assert.match(await s.k(['rollout', 'status', 'ds/logd', '--timeout=60s']), /successfully rolled out/);
    // node-2's agent was killed earlier: its unreachable taint keeps logd off it.
    const desired = Number(await s.k(['get', 'ds', 'logd', '-o', 'jsonpath={.status.desiredNumberScheduled}']));
    assert.equal(desired, 3);
    await eventually(async () => {
      const images = (await s.k(['get', 'pods', '-l', 'app=logd', '-o', 'jsonpath={range .items[*]}{.spec.containers[0].image}{"\\n"}{end}'])).trim().split('\n');
      if (images.length === desired && images.every((i) => i === 'busybox:1.36')) return true;
      throw new Error(`images: ${images.join(' ')}`);
    }, 30_000, 'every logd pod back on busybox:1.36');
    assert.match(await s.k(['rollout', 'history', 'ds/logd']), /REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>/);
    const table = await s.k(['get', 'controllerrevisions', '-l', 'app=logd']);
    assert.match(table, /^NAME\s+CONTROLLER\s+REVISION\s+AGE$/m);
    assert.match(table, /^logd-\S+\s+daemonset\.apps\/logd\s+3\s/m);
  });

  it('cascades the deletion of a Deployment to its ReplicaSets and pods', async () => {
    await s.k(['delete', 'deployment', 'web']);
    await eventually(async () => (await s.k(['get', 'rs', '-l', 'app=web', '-o', 'name'])).trim() === '', 30_000, 'ReplicaSets gone');
    await eventually(async () => running(await pods('app=web')).length === 0, 30_000, 'pods gone');
  });
});
