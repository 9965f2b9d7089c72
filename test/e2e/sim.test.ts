// `skiff sim` end to end: a few hundred simulated nodes in one process against a real server.
// Every node registers and goes Ready, runs the pods scheduled to it, restores its Node when it is
// deleted, writes only as itself (the node authorizer refuses it another node's objects), goes
// Unknown when the process is SIGKILLed and comes back when it restarts, and on SIGTERM leaves:
// every Node and Lease removed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIFF_BIN, TestServer, eventually, processesMentioning } from '../support/cluster.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';
import { ApiClient } from '../../src/client/rest.js';
import { isNodeReady } from '../../src/api/kinds/node.js';
import { actingAs } from '../../src/sim/acting-as.js';
import { isStatusError } from '../../src/api/errors.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

const NODES = 300;
const FLEET_TOKEN = 'fleet-token-0123456789abcdef';

describe('skiff sim: a fleet of simulated nodes in one process', () => {
  const s = new TestServer('sim');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-sim-'));
  let api: ApiClient;
  let sim: ManagedProcess | undefined;

  const startSim = () =>
    startProcess({
      name: 'sim',
      command: process.execPath,
      args: [
        SKIFF_BIN, 'sim', '--kubeconfig', s.kubeconfig, '--nodes', String(NODES), '--name-prefix', 'fleet', '--data-dir', join(dir, 'sim'),
        '--node-lease-duration-seconds', '8', '--node-status-update-frequency', '2s', '--cpu', '4', '--memory', '16Gi', '--log-format', 'json',
        '--sim-stages', join(dir, 'stages.yaml'),
      ],
      output: join(dir, 'sim.log'),
    });
  const fleetNodes = async (): Promise<Node[]> => (await api.get<KubeList<Node>>('/api/v1/nodes', { query: { labelSelector: 'skiff.dev/simulated-by=fleet' } })).items;
  const fleetLeases = async (): Promise<number> =>
    (await api.get<KubeList<KubeObject>>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases')).items.filter((l) => l.metadata.name!.startsWith('fleet-')).length;
  const ready = async (): Promise<number> => (await fleetNodes()).filter(isNodeReady).length;

  before(async () => {
    writeFileSync(
      join(dir, 'stages.yaml'),
      'pods:\n  - name: jobs-complete\n    selector: {ownerKind: Job}\n    exit: {after: 1s, jitter: 1s, code: 0}\n' +
        'nodes:\n  - name: pressure\n    selector: {names: "fleet-00[1-3]"}\n    conditions:\n      - {type: MemoryPressure, status: "True", after: 0s, reason: SimulatedPressure}\n',
    );
    // A static-token user allowed to impersonate (system:masters), for a fleet run with --token.
    writeFileSync(join(dir, 'tokens.csv'), `${FLEET_TOKEN},fleet-operator,u-1,"system:masters"\n`);
    await s.start(['--node-monitor-period', '1s', '--node-monitor-grace-period', '8s', '--token-auth-file', join(dir, 'tokens.csv')]);
    api = s.client();
    sim = startSim();
  });

  after(async () => {
    sim?.signal('SIGKILL');
    api?.close();
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`registers ${NODES} nodes, each Ready with its Lease`, async () => {
    await eventually(async () => (await ready()) === NODES, 90_000, `${NODES} nodes Ready`, 500);
    // Each Lease follows its Node's registration by a request.
    await eventually(async () => (await fleetLeases()) === NODES, 10_000, `${NODES} Leases`, 500);
    // The stages' node conditions: fleet-001 … 003 report memory pressure, the others do not.
    const pressure = (n: Node) => n.status?.conditions?.find((c) => c.type === 'MemoryPressure');
    const all = await fleetNodes();
    assert.deepEqual(all.filter((n) => pressure(n)?.status === 'True').map((n) => n.metadata.name).sort(), ['fleet-001', 'fleet-002', 'fleet-003']);
    assert.equal(pressure(all.find((n) => n.metadata.name === 'fleet-001')!)?.reason, 'SimulatedPressure');
    const names = all.map((n) => n.metadata.name!).sort();
    assert.equal(names[0], 'fleet-001');
    assert.equal(names[NODES - 1], `fleet-${NODES}`);
  });

  it('runs the pods scheduled to its nodes', async () => {
    await s.k(['create', 'deployment', 'web', '--image=registry.example/web:1', '--replicas=600']);
    await eventually(async () => {
      const pods = (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=web' } })).items;
      return pods.filter((p) => p.status?.phase === 'Running').length === 600;
    }, 90_000, '600 pods Running', 500);
    const pods = (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=web' } })).items;
    assert.ok(new Set(pods.map((p) => p.spec?.nodeName)).size > NODES / 2, 'spread over the fleet');
  });

  it('restores a deleted Node at once, as a skiff agent does', async () => {
    const before = (await api.get<Node>('/api/v1/nodes/fleet-042')).metadata.uid;
    await api.delete('/api/v1/nodes/fleet-042');
    const back = await eventually(async () => {
      const n = await api.get<Node>('/api/v1/nodes/fleet-042').catch(() => undefined);
      return n && n.metadata.uid !== before ? n : undefined;
    }, 10_000, 'fleet-042 re-created');
    assert.equal(back.metadata.labels?.['skiff.dev/simulated-by'], 'fleet');
  });

  it('writes as each node: a node may not change another node\'s Node', async () => {
    const as7 = actingAs(api, 'fleet-007');
    await as7.patch('/api/v1/nodes/fleet-007/status', { status: { conditions: [] } }, 'strategic');
    await assert.rejects(as7.patch('/api/v1/nodes/fleet-008', { metadata: { labels: { x: 'y' } } }, 'merge'), (e: unknown) => isStatusError(e) && e.code === 403);
  });

  it('completes a Job: its simulated containers exit 0 by themselves, as the stages say', async () => {
    await s.k(['create', 'job', 'batch', '--image=registry.example/batch:1', '--', 'work']);
    await eventually(async () => {
      const j = await api.get<KubeObject & { status?: { succeeded?: number; conditions?: { type: string; status: string }[] } }>('/apis/batch/v1/namespaces/default/jobs/batch');
      return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
    }, 60_000, 'the Job Complete', 500);
    // The Deployment's pods match no stage: they run on.
    const web = (await api.get<KubeList<Pod>>('/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=web' } })).items;
    assert.equal(web.filter((p) => p.status?.phase === 'Running').length, 600);
  });

  it('runs with a bearer token instead of a kubeconfig, over HTTP/1.1 (--no-http2), and writes its nodes\' call latencies to --stats-file', async () => {
    const server = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8')).server;
    const stats = join(dir, 'stats.json');
    const tok = startProcess({
      name: 'sim-token',
      command: process.execPath,
      args: [SKIFF_BIN, 'sim', '--server', server, '--ca-file', join(s.dataDir, 'tls', 'ca.crt'), '--nodes', '5', '--name-prefix', 'tok', '--data-dir', join(dir, 'sim-token'), '--node-lease-duration-seconds', '4', '--stats-file', stats, '--no-http2', '--log-format', 'json'],
      env: { ...process.env, SKIFF_TOKEN: FLEET_TOKEN },
      output: join(dir, 'sim-token.log'),
    });
    try {
      await eventually(async () => (await api.get<KubeList<Node>>('/api/v1/nodes', { query: { labelSelector: 'skiff.dev/simulated-by=tok' } })).items.filter(isNodeReady).length === 5, 30_000, '5 token-fleet nodes Ready', 500);
      const figures = await eventually(() => {
        try {
          const f = JSON.parse(readFileSync(stats, 'utf8')) as { calls: Record<string, { count: number; p99Ms: number }> };
          return (f.calls['PUT lease']?.count ?? 0) > 0 ? f : undefined;
        } catch {
          return undefined;
        }
      }, 30_000, 'Lease renewals in the stats file', 500);
      assert.ok(figures.calls['POST node']!.count >= 5, 'each node registered itself');
      assert.ok(figures.calls['PUT lease']!.p99Ms > 0);
    } finally {
      tok.signal('SIGTERM');
      assert.equal((await tok.exited).code, 0);
    }
    assert.equal((await api.get<KubeList<Node>>('/api/v1/nodes', { query: { labelSelector: 'skiff.dev/simulated-by=tok' } })).items.length, 0, 'it left on SIGTERM');
  });

  it('goes Unknown when the process is SIGKILLed, and every node is Ready again when it restarts', async () => {
    sim!.signal('SIGKILL');
    await sim!.exited;
    await eventually(async () => (await fleetNodes()).filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'Unknown')).length === NODES, 60_000, 'every node Unknown', 500);
    sim = startSim();
    await eventually(async () => (await ready()) === NODES, 90_000, `${NODES} nodes Ready again`, 500);
    assert.equal((await fleetNodes()).length, NODES, 'adopted, not duplicated');
  });

  it('leaves on SIGTERM: every Node and Lease removed', async () => {
    await s.k(['delete', 'deployment', 'web']);
    sim!.signal('SIGTERM');
    const end = await sim!.exited;
    assert.equal(end.code, 0);
    assert.equal((await fleetNodes()).length, 0);
    assert.equal(await fleetLeases(), 0);
  });
});

describe('skiff up --runtime simulated with many nodes', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-up-sim-'));
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs them as one skiff sim fleet, and stops it with the cluster', async () => {
    const out = join(dataDir, 'up.out');
    up = startProcess({ name: 'up', command: process.execPath, args: [SKIFF_BIN, 'up', '--data-dir', dataDir, '--nodes', '40', '--runtime', 'simulated', '--port', '0'], output: out });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 90_000, '"cluster ready"', 500);
    const text = readFileSync(out, 'utf8');
    assert.match(text, /starting 40 simulated nodes in one process/);
    assert.match(text, /cluster ready: 1 control-plane node and 40 nodes Ready/);
    const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 5000 });
    try {
      const names = (await client.get<KubeList<Node>>('/api/v1/nodes', { query: { labelSelector: 'skiff.dev/simulated-by=node' } })).items.map((n) => n.metadata.name!).sort();
      assert.deepEqual([names.length, names[0], names[39]], [40, 'node-01', 'node-40']);
    } finally {
      client.close();
    }
    assert.equal(processesMentioning(join(dataDir, 'agents')).length, 0, 'no agent process per node');
    up.signal('SIGTERM');
    assert.equal((await up.exited).code, 0);
    assert.deepEqual(processesMentioning(dataDir), [], 'the fleet stopped with the cluster');
    up = undefined;
  });
});
