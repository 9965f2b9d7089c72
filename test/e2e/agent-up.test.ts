// `skiff up --nodes 2`: a server and two agents as separate processes, "cluster ready" once both
// nodes are Ready, timing flags passed through, and a graceful stop that leaves nothing behind.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { SKIFF_BIN, containerPids, eventually, processesMentioning } from '../support/cluster.js';
import type { KubeList } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Lease } from '../../src/api/kinds/lease.js';

function kubectl(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('kubectl', ['--kubeconfig', join(dataDir, 'kubeconfig'), ...args], { timeout: 20_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
  );
}

const dataDir = mkdtempSync(join(tmpdir(), 'skiff-up-e2e-'));

describe('skiff up', () => {
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts a server and 2 agents, prints "cluster ready", and stops everything gracefully', async () => {
    const out = join(dataDir, 'up.out');
    // The dashboard's port is taken: the cluster starts anyway and its dashboard moves.
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', r));
    const taken = (squatter.address() as AddressInfo).port;
    up = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--data-dir', dataDir, '--nodes', '2', '--port', '0', '--dashboard-listen', `127.0.0.1:${taken}`, '--node-lease-duration-seconds', '8', '--node-status-update-frequency=1s'],
      output: out,
    });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 60_000, '"cluster ready"');
    // The dashboard comes with the cluster: its address printed, its page served.
    let dashboard = '';
    await eventually(() => (dashboard = /^dashboard: (http:\/\/127\.0\.0\.1:\d+\/)$/m.exec(readFileSync(out, 'utf8'))?.[1] ?? '') !== '', 10_000, 'the dashboard address');
    assert.match(readFileSync(out, 'utf8'), new RegExp(`dashboard: 127\\.0\\.0\\.1:${taken} is in use; serving on another port`));
    assert.notEqual(new URL(dashboard).port, String(taken));
    squatter.close();
    const page = await fetch(dashboard);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<script type="module" src="app.js">/);
    const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 5000 });
    try {
      const nodes = await client.get<KubeList<Node>>('/api/v1/nodes');
      assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), ['control-plane', 'node-1', 'node-2']);
      assert.ok(nodes.items.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')));
      // The server's own machine is a control-plane node, labelled and tainted as kubeadm's.
      const cp = nodes.items.find((n) => n.metadata.name === 'control-plane')!;
      assert.equal(cp.metadata.labels?.['node-role.kubernetes.io/control-plane'], '');
      assert.deepEqual(cp.spec?.taints?.map((t) => `${t.key}:${t.effect}`), ['node-role.kubernetes.io/control-plane:NoSchedule']);
      assert.match(await kubectl(['get', 'nodes']), /^control-plane\s+Ready\s+control-plane\s/m);
      // Timing flags reach the agents.
      const lease = await client.get<Lease>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-1');
      assert.equal(lease.spec?.leaseDurationSeconds, 8);
      // Agents joined with the token: the Node was written by a node credential, not the admin.
      assert.ok(readdirSync(join(dataDir, 'agents', 'node-1', 'credential')).includes('node.crt'));
      const pod = await client.create<Pod>('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'up-pod' },
        spec: { nodeName: 'node-2', terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: 'x', command: ['sleep', '3600'] }] },
      });
      await eventually(async () => (await client.get<Pod>('/api/v1/namespaces/default/pods/up-pod')).status?.phase === 'Running', 15_000, 'pod Running');
      assert.equal(containerPids(pod.metadata.uid!).length, 1);
      // A second `up` on the same directory refuses before starting anything, and the cluster carries on.
      const second = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(process.execPath, [SKIFF_BIN, 'up', '--data-dir', dataDir, '--nodes', '2', '--port', '0'], { timeout: 20_000 }, (err, _out, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
        ),
      );
      assert.equal(second.code, 1);
      assert.match(second.stderr, /^skiff up: the cluster directory .* is in use by process \d+/m);
      await client.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-second-up' } });
      assert.equal(containerPids(pod.metadata.uid!).length, 1, 'the running pod was left alone');
      up.signal('SIGTERM');
      const exit = await up.exited;
      assert.equal(exit.code, 0);
      assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
      assert.deepEqual(containerPids(pod.metadata.uid!), []);
      assert.deepEqual(processesMentioning(dataDir), [], 'no server, agent or container process left');
      up = undefined;
    } finally {
      client.close();
    }
  });

  it('npm run up: a SIGINT to npm alone (not its process group) reaches skiff up, which stops the cluster', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skiff-npm-up-e2e-'));
    const out = join(dir, 'up.out');
    // Detached: npm leads its own process group, and only npm itself is signalled below.
    const npm = startProcess({ name: 'npm-up', command: 'npm', args: ['run', '--silent', 'up', '--', '--data-dir', dir, '--nodes', '1', '--port', '0', '--runtime', 'simulated', '--dashboard=false'], output: out, cwd: dirname(dirname(SKIFF_BIN)) });
    try {
      await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 60_000, '"cluster ready"');
      process.kill(npm.child.pid!, 'SIGINT');
      await eventually(() => readFileSync(out, 'utf8').includes('cluster stopped'), 30_000, '"cluster stopped"');
      await eventually(() => processesMentioning(dir).length === 0, 15_000, 'no server or agent left');
      assert.doesNotMatch(readFileSync(out, 'utf8'), /^dashboard/m, '--dashboard=false: no dashboard');
    } finally {
      npm.signal('SIGKILL');
      // The server and agents run in their own process groups: make sure a failure leaves none.
      for (const pid of processesMentioning(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
