// Where a newcomer meets skiff's limits, the message says what is missing and what to do, in one
// line: `skiff sim` with a credential that may not impersonate nodes exits at once instead of
// waiting silently; `kubectl cp` on the process runtime, `kubectl logs` on a simulated fleet's
// node, `kubectl autoscale` without autoscaling/v2. And the process runtime's logs carry per-line
// times, so `kubectl logs --since=2s` (kubetail passes --since on every call) and `--timestamps`
// work there as on containerd.
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

describe('errors where the user is, and per-line log times on the process runtime', () => {
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

  it('kubectl logs --since=2s and --timestamps on the process runtime: per line, not the whole log', async () => {
    await api.create('/api/v1/namespaces/default/pods', pod('ticker', 'proc-node', 'i=0; while true; do echo tick $i; i=$((i+1)); sleep 0.5; done'));
    await running('ticker');
    // Enough lines that the first are well older than two seconds.
    await eventually(async () => /tick 12\n/.test(await s.k(['logs', 'ticker'])), 20_000, 'thirteen lines');
    const all = (await s.k(['logs', 'ticker'])).trim().split('\n');
    const recent = (await s.k(['logs', 'ticker', '--since=2s'])).trim().split('\n');
    assert.ok(recent.length >= 2 && recent.length <= 6, `about four lines in two seconds at two a second, got ${recent.length}: ${recent.join(' | ')}`);
    assert.ok(!recent.includes('tick 0'), 'the first lines are older than two seconds');
    const first = Number(/tick (\d+)/.exec(recent[0]!)?.[1]);
    assert.ok(first >= all.length - 6, `the newest lines (from ${first}, of ${all.length})`);
    const stamped = (await s.k(['logs', 'ticker', '--timestamps', '--tail=5'])).trim().split('\n');
    assert.equal(stamped.length, 5);
    let before = 0;
    for (const l of stamped) {
      const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) tick \d+$/.exec(l);
      assert.ok(m, `an RFC 3339 time before each line: ${l}`);
      const t = Date.parse(m[1]!.replace(/(\.\d{3})\d+/, '$1'));
      assert.ok(t >= before, 'times in order');
      assert.ok(Math.abs(Date.now() - t) < 10_000, `a time of now, not of the file: ${m[1]}`);
      before = t;
    }
    const span = Date.parse(stamped[4]!.slice(0, 23) + 'Z') - Date.parse(stamped[0]!.slice(0, 23) + 'Z');
    assert.ok(span >= 1000 && span <= 4000, `five lines half a second apart span about two seconds, not one moment: ${span} ms`);
  });

  it('kubectl cp on the process runtime says there is no container to copy into, and what to do', async () => {
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
