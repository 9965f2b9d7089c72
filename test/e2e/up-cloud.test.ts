// `skiff up --cloud local --node-group MIN:MAX:GROUP`: the cloud and the autoscaler start with the
// cluster, the first MIN instances of each group are its nodes, and Ctrl-C switches every machine
// off with the cluster; the next `up` switches them on again as the same Nodes. The cloud commands run in the cluster's directory find its cloud without being told where.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { freePorts } from '../../src/util/ports.js';
import { SKIFF_BIN, eventually, processesMentioning, runSkiff } from '../support/cluster.js';
import type { KubeList } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';

describe('skiff up with a local cloud', () => {
  // The cluster "in the current directory": <root>/.skiff, where up puts it by default.
  const root = mkdtempSync(join(tmpdir(), 'skiff-up-cloud-'));
  const dataDir = join(root, '.skiff');
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    for (const pid of processesMentioning(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    rmSync(root, { recursive: true, force: true });
  });

  const startUp = (out: string): ManagedProcess =>
    startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--data-dir', dataDir, '--port', '0', '--runtime', 'simulated', '--cloud', 'local', '--node-group', '2:4:pool', '--instance-type', 'cpu=2,memory=4Gi,pods=50', '--node-status-update-frequency=1s'],
      output: out,
    });
  const poolNodes = async (): Promise<Map<string, string>> => {
    const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 5000 });
    try {
      const nodes = (await client.get<KubeList<Node>>('/api/v1/nodes')).items.filter((n) => n.spec?.providerID?.startsWith('skiff://pool/'));
      return new Map(nodes.map((n) => [n.spec!.providerID!, n.metadata.uid!]));
    } finally {
      client.close();
    }
  };

  it('starts the cloud with MIN instances per group as the nodes, and switches every machine off on SIGINT', async () => {
    const out = join(root, 'up.out');
    up = startUp(out);
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 60_000, '"cluster ready"');
    assert.match(readFileSync(out, 'utf8'), /cluster ready: 1 control-plane node and 2 nodes \(local cloud http:\/\/127\.0\.0\.1:\d+, autoscaled: pool 2\.\.4;/);
    const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 5000 });
    try {
      const nodes = (await client.get<KubeList<Node>>('/api/v1/nodes')).items.filter((n) => n.spec?.providerID?.startsWith('skiff://pool/'));
      assert.equal(nodes.length, 2);
      for (const n of nodes) {
        assert.equal(n.metadata.labels?.['node.kubernetes.io/instance-type'], 'custom');
        assert.equal(n.status?.capacity?.['cpu'], '2');
      }
    } finally {
      client.close();
    }

    // In the cluster's directory, no --cloud-endpoint: the cloud up started (on a port of its choosing).
    const listed = await runSkiff(['cloud', 'instances'], { cwd: root });
    assert.equal(listed.code, 0, listed.stderr);
    const rows = listed.stdout.trim().split('\n').slice(1);
    assert.equal(rows.length, 2, listed.stdout);
    const [id] = rows[0]!.split(/\s+/);
    const fault = await runSkiff(['cloud', 'fault', id!, 'shutdown'], { cwd: root });
    assert.equal(fault.code, 0, fault.stderr);
    assert.match(fault.stdout, new RegExp(`^instance ${id} \\(node \\S+\\): shutdown applied; now Stopped$`, 'm'));
    const after = await runSkiff(['cloud', 'instances'], { cwd: root });
    assert.match(after.stdout, new RegExp(`^${id}\\s+pool\\s+Stopped\\s.*\\sshutdown\\s`, 'm'));
    const melt = await runSkiff(['cloud', 'fault', id!, 'melt'], { cwd: root });
    assert.equal(melt.code, 1);
    assert.match(melt.stderr, /Allowed choices are no-boot, classic, lost, shutdown/);

    // A cluster directory without a cloud, and no cluster at all: one line each, with the way out.
    const plain = join(root, 'plain');
    mkdirSync(join(plain, '.skiff'), { recursive: true });
    writeFileSync(join(plain, '.skiff', 'cluster.json'), '{"storage":"sqlite","etcdMembers":0}\n');
    const none = await runSkiff(['cloud', 'instances'], { cwd: plain });
    assert.equal(none.code, 1);
    assert.equal(none.stderr.trim().split('\n').length, 1, none.stderr);
    assert.match(none.stderr, /^skiff cloud: the cluster in \S+\/plain\/\.skiff has no local cloud running: start it with skiff up --cloud local --node-group MIN:MAX:GROUP, or pass --cloud-endpoint URL$/m);
    const [unused] = await freePorts(1);
    const gone = await runSkiff(['cloud', 'instances', '--cloud-endpoint', `http://127.0.0.1:${unused}`], { cwd: plain });
    assert.match(gone.stderr, new RegExp(`^skiff cloud: no local cloud answers at http://127\\.0\\.0\\.1:${unused} \\(--cloud-endpoint; ECONNREFUSED\\): start a cluster with one`, 'm'));

    const before = await poolNodes();
    up.signal('SIGINT');
    await up.exited;
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    const state = JSON.parse(readFileSync(join(dataDir, 'cloud', 'cloud.json'), 'utf8')) as { instances: { state: string }[] };
    assert.ok(state.instances.length === 2 && state.instances.every((i) => i.state === 'Stopped'), `switched off, not deleted: ${JSON.stringify(state.instances)}`);
    assert.ok(!existsSync(join(dataDir, 'cloud', 'endpoint')), 'a stopped cloud is not found any more');
    assert.deepEqual(processesMentioning(dataDir), [], 'no machine left running');

    // Started again: the same machines boot (the one shut down by the fault too), as the same Nodes.
    const out2 = join(root, 'up2.out');
    up = startUp(out2);
    await eventually(() => readFileSync(out2, 'utf8').includes('cluster ready'), 60_000, '"cluster ready" again');
    assert.match(readFileSync(out2, 'utf8'), /cluster ready: 1 control-plane node and 2 nodes/);
    assert.deepEqual(await poolNodes(), before, 'the same instances as the same Nodes (provider IDs and uids)');
    const again = await runSkiff(['cloud', 'instances'], { cwd: root });
    assert.equal(again.stdout.trim().split('\n').slice(1).filter((r) => /\sRunning\s/.test(r)).length, 2, again.stdout);
    up.signal('SIGINT');
    await up.exited;
    assert.deepEqual(processesMentioning(dataDir), [], 'no machine left running after the second stop');
  });
});
