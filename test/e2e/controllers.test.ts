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
  it('runs a ReplicationController with the kubectl verbs: get, scale, describe, expose, delete', async () => {
    const manifest = ['apiVersion: v1', 'kind: ReplicationController', 'metadata: {name: legacy}', 'spec:', '  replicas: 3', '  template:', '    metadata: {labels: {app: legacy}}', '    spec: {containers: [{name: web, image: nginx:1.27, ports: [{containerPort: 8080}]}]}'].join('\n');
    await s.k(['apply', '-f', '-'], { input: manifest });
    await eventually(async () => running(await pods('app=legacy')).length === 3, 30_000, '3 running RC pods');
    assert.ok((await pods('app=legacy')).every((p) => p.owner === 'ReplicationController'));
    await eventually(async () => /^legacy\s+3\s+3\s+3\s/m.test(await s.k(['get', 'rc', 'legacy'])), 30_000, 'kubectl get rc shows 3/3/3');
    assert.match(await s.k(['get', 'rc', 'legacy', '-o', 'wide']), /^legacy\s+3\s+3\s+3\s+\S+\s+web\s+nginx:1\.27\s+app=legacy$/m);
    assert.match(await s.k(['scale', 'rc', 'legacy', '--replicas=1']), /replicationcontroller\/legacy scaled/);
    await eventually(async () => running(await pods('app=legacy')).length === 1, 30_000, 'scaled down to 1');
    assert.match(await s.k(['scale', 'rc', 'legacy', '--current-replicas=1', '--replicas=2']), /scaled/);
    await eventually(async () => running(await pods('app=legacy')).length === 2, 30_000, 'scaled up to 2');
    const described = await s.k(['describe', 'rc', 'legacy']);
    assert.match(described, /Selector:\s+app=legacy/);
    assert.match(described, /Replicas:\s+2 current \/ 2 desired/);
    assert.match(described, /Pods Status:\s+2 Running/);
    assert.match(described, /SuccessfulDelete/);
    // Without --port, kubectl takes the port from the template's containers.
    await s.k(['expose', 'rc', 'legacy']);
    assert.match(await s.k(['get', 'service', 'legacy', '-o', 'jsonpath={.spec.selector.app} {.spec.ports[0].targetPort}']), /^legacy 8080$/);
    const rolled = await s.kubectl(['rollout', 'status', 'rc/legacy']);
    assert.notEqual(rolled.code, 0);
    await s.k(['delete', 'rc', 'legacy']);
    await eventually(async () => (await pods('app=legacy')).length === 0, 30_000, 'pods of the deleted RC gone');
  });

  it('runs a StatefulSet as upstream: stable names and hostnames in ordinal order, rolling updates from the top, partitions, scale-down from the highest ordinal', async () => {
    const sts = (name: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name },
      spec: {
        serviceName: name,
        replicas: 3,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }], ...extra } },
      },
    });
    const status = async (name: string) => JSON.parse(await s.k(['get', 'sts', name, '-o', 'json'])) as { metadata: { generation: number }; status: { observedGeneration?: number; replicas: number; currentRevision?: string; updateRevision?: string } };
    const revisions = async (app: string) => {
      const list = JSON.parse(await s.k(['get', 'pods', '-l', `app=${app}`, '-o', 'json'])) as KubeList;
      return Object.fromEntries(list.items.filter((p) => !p.metadata.deletionTimestamp).map((p) => [p.metadata.name!, p.metadata.labels?.['controller-revision-hash'] ?? '']));
    };

    // OrderedReady: while gate-0 cannot run, gate-1 is not even created.
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(sts('gate', { nodeSelector: { 'sts-e2e': 'yes' } })) });
    await eventually(async () => {
      const st = await status('gate');
      return st.status.observedGeneration === st.metadata.generation && st.status.replicas === 1;
    }, 15_000, 'gate observed with one pod');
    assert.deepEqual(Object.keys(await revisions('gate')), ['gate-0']);
    const nodes = JSON.parse(await s.k(['get', 'nodes', '-o', 'json'])) as KubeList;
    const readyNode = nodes.items.find((n) => ((n.status ?? {}) as { conditions?: { type: string; status: string }[] }).conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))!.metadata.name!;
    await s.k(['label', 'node', readyNode, 'sts-e2e=yes']);
    await s.k(['rollout', 'status', 'sts/gate', '--timeout=60s']);
    assert.deepEqual(Object.keys(await revisions('gate')).sort(), ['gate-0', 'gate-1', 'gate-2']);
    await s.k(['delete', 'sts', 'gate']);

    // As charts write them: a claim template the containers mount.
    const db = sts('db');
    Object.assign(db.spec, { volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }] });
    Object.assign(db.spec.template.spec.containers[0]!, { volumeMounts: [{ name: 'data', mountPath: '/data' }] });
    await s.k(['apply', '-f', '-'], { input: JSON.stringify(db) });
    await s.k(['rollout', 'status', 'sts/db', '--timeout=60s']);
    const pod1 = JSON.parse(await s.k(['get', 'pod', 'db-1', '-o', 'json'])) as { spec: { hostname?: string; subdomain?: string; volumes?: unknown[] }; metadata: { labels: Record<string, string> } };
    // Beside ServiceAccount admission's token volume (kube-api-access-…).
    assert.deepEqual(pod1.spec.volumes?.filter((v) => !(v as { name: string }).name.startsWith('kube-api-access-')), [{ name: 'data', persistentVolumeClaim: { claimName: 'data-db-1' } }]);
    assert.deepEqual([pod1.spec.hostname, pod1.spec.subdomain, pod1.metadata.labels['apps.kubernetes.io/pod-index'], pod1.metadata.labels['statefulset.kubernetes.io/pod-name']], ['db-1', 'db', '1', 'db-1']);
    assert.match(await s.k(['get', 'sts', 'db']), /^db\s+3\/3\s+\S+$/m);
    // Each pod's claim, named <template>-<set>-<ordinal> and labelled with the set's selector, of
    // the default class: provisioned on its pod's node by the local-path provisioner, so Bound.
    const claims = JSON.parse(await s.k(['get', 'pvc', '-o', 'json'])) as KubeList;
    const dbClaims = claims.items.filter((c) => c.metadata.name!.startsWith('data-db-'));
    assert.deepEqual(dbClaims.map((c) => c.metadata.name).sort(), ['data-db-0', 'data-db-1', 'data-db-2']);
    for (const c of dbClaims) {
      assert.deepEqual(c.metadata.labels, db.spec.selector.matchLabels);
      assert.deepEqual([(c.spec as { resources: unknown }).resources, (c.status as { phase: string }).phase], [{ requests: { storage: '1Gi' } }, 'Bound']);
    }
    assert.match(await s.k(['get', 'pvc', 'data-db-1']), /^data-db-1\s+Bound\s+pvc-\S+\s+1Gi\s+RWO\s+local-path\s+<unset>\s+\S+$/m);

    // A rolling update replaces every pod; the update revision becomes the current one.
    await s.k(['set', 'env', 'sts/db', 'V=2']);
    await s.k(['rollout', 'status', 'sts/db', '--timeout=90s']);
    await eventually(async () => {
      const st = (await status('db')).status;
      const revs = Object.values(await revisions('db'));
      return st.currentRevision === st.updateRevision && revs.length === 3 && revs.every((r) => r === st.updateRevision);
    }, 30_000, 'every pod at the update revision, which is current');
    const v2 = (await status('db')).status.updateRevision!;

    // With a partition of 2 only db-2 moves on; the others keep the current revision, even when re-created.
    await s.k(['patch', 'sts', 'db', '-p', '{"spec":{"updateStrategy":{"rollingUpdate":{"partition":2}}}}']);
    await s.k(['set', 'env', 'sts/db', 'V=3']);
    assert.match(await s.k(['rollout', 'status', 'sts/db', '--timeout=60s']), /partitioned roll out complete: 1 new pods have been updated/);
    const v3 = (await status('db')).status.updateRevision!;
    await eventually(async () => JSON.stringify(await revisions('db')) === JSON.stringify({ 'db-0': v2, 'db-1': v2, 'db-2': v3 }), 30_000, 'db-2 alone updated');
    await s.k(['delete', 'pod', 'db-0', '--wait=false']);
    await eventually(async () => (await revisions('db'))['db-0'] === v2, 30_000, 'db-0 re-created at the current revision');

    // Scale-down removes the highest ordinals.
    await s.k(['scale', 'sts', 'db', '--replicas=1']);
    await eventually(async () => JSON.stringify(Object.keys(await revisions('db'))) === '["db-0"]', 30_000, 'only db-0 left');
    assert.match(await s.k(['rollout', 'history', 'sts/db']), /^3\s+<none>$/m);
    await s.k(['delete', 'sts', 'db']);
  });
});
