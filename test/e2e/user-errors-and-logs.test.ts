// Where a newcomer meets skiff's limits, the message says what is missing and what to do, in one
// line: `skiff sim` with a credential that may not impersonate nodes exits at once instead of
// waiting silently; `kubectl cp` on the process runtime, `kubectl logs` on a simulated fleet's
// node, `kubectl autoscale` without autoscaling/v2.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SKIFF_BIN, TEST_JOIN_TOKEN, TestAgent, TestServer, eventually } from '../support/cluster.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ApiClient } from '../../src/client/rest.js';

const VIEWER_TOKEN = 'viewer-0123456789abcdef';

const pod = (name: string, node: string, script: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { nodeName: node, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', script] }] },
});

describe('errors where the user is', () => {
  const s = new TestServer('user-errors');
  const dir = mkdtempSync(join(tmpdir(), 'skiff-user-errors-'));
  const agent = new TestAgent(s, 'proc-node');
  let fleet: ManagedProcess | undefined;
  let api: ApiClient;

  const running = (name: string) =>
    eventually(async () => (await api.get<Pod>(`/api/v1/namespaces/default/pods/${name}`)).status?.phase === 'Running', 30_000, `pod ${name} Running`);

  before(async () => {
    const tokens = join(dir, 'tokens.csv');
    // A user of the cluster who may read, but not act as nodes (not in system:masters).
    writeFileSync(tokens, `${VIEWER_TOKEN},viewer,viewer-uid\n`);
    await s.start(['--token', TEST_JOIN_TOKEN, '--token-auth-file', tokens]);
    api = s.client();
    await agent.start(['--runtime', 'process']);
  });

  after(async () => {
    api?.close();
    await fleet?.stop(10_000);
    await agent.stop();
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('skiff sim with a credential that may not impersonate nodes says so in one line and exits within 10 s', async () => {
    const started = Date.now();
    const sim = startProcess({
      name: 'sim-viewer',
      command: process.execPath,
      args: [SKIFF_BIN, 'sim', '--server', `https://127.0.0.1:${s.port!}`, '--token', VIEWER_TOKEN, '--ca-file', join(s.dataDir, 'tls', 'ca.crt'), '--nodes', '3', '--data-dir', join(dir, 'sim-viewer'), '--log-format', 'json'],
      output: join(dir, 'sim-viewer.log'),
    });
    const exit = await Promise.race([sim.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 10_000).unref())]);
    if (!exit) await sim.stop(1000);
    assert.ok(exit, `still running after 10 s:\n${readFileSync(join(dir, 'sim-viewer.log'), 'utf8')}`);
    assert.ok(Date.now() - started < 10_000);
    assert.equal(exit.code, 1);
    const lines = readFileSync(join(dir, 'sim-viewer.log'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1, lines.join('\n'));
    assert.match(lines[0]!, /^skiff sim: the credential may not impersonate nodes, .*use the cluster's admin kubeconfig/);
  });

  it('kubectl cp on the process runtime says there is no container to copy into, and what to do', async () => {
    await api.create('/api/v1/namespaces/default/pods', pod('ticker', 'proc-node', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.5; done'));
    await running('ticker');
    const r = await s.kubectl(['cp', join(dir, 'tokens.csv'), 'ticker:/tmp/tokens.csv']);
    assert.notEqual(r.code, 0);
    const lines = r.stderr.trim().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /kubectl cp needs a container to run tar in, and the process runtime has none .*copy the files on the node itself.*--runtime containerd/);
  });

  it('kubectl logs on a node of a simulated fleet says it runs no process, in one line', async () => {
    fleet = startProcess({
      name: 'sim',
      command: process.execPath,
      args: [SKIFF_BIN, 'sim', '--kubeconfig', s.kubeconfig, '--nodes', '1', '--name-prefix', 'fleet', '--data-dir', join(dir, 'sim'), '--node-status-update-frequency', '1s'],
      output: join(dir, 'sim.log'),
    });
    await eventually(async () => (await api.get<{ status?: { conditions?: { type: string; status: string }[] } }>('/api/v1/nodes/fleet-1')).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), 30_000, 'fleet-1 Ready');
    await api.create('/api/v1/namespaces/default/pods', pod('sim-pod', 'fleet-1', 'echo hi'));
    await running('sim-pod');
    const r = await s.kubectl(['logs', 'sim-pod']);
    assert.equal(r.code, 1);
    assert.match(r.stderr.trim(), /^Error from server \(BadRequest\): node fleet-1 is simulated \(skiff sim\): its pods run no process, so they have no logs, exec or port-forward; run the pod on a node whose agent has --runtime process or containerd$/);
  });

  it('kubectl autoscale without autoscaling/v2 served gets the standard NotFound, as from any cluster without the API', async () => {
    await s.k(['create', 'deployment', 'web', '--image=busybox']);
    const groups = await s.k(['api-versions']);
    const r = await s.kubectl(['autoscale', 'deployment', 'web', '--min=1', '--max=3', '--cpu-percent=50']);
    if (/^autoscaling\/v2$/m.test(groups)) {
      assert.equal(r.code, 0, r.stderr);
      return;
    }
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim(), 'Error from server (NotFound): the server could not find the requested resource');
  });
});
