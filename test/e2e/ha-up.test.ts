// `skiff up --servers 3 --storage etcd`: a real 3-member etcd on 127.0.0.1-3:2379/2380 and 3 servers
// on 127.0.0.1-3 with one port, agents that know every member; a graceful stop that leaves nothing
// behind; and `--servers 3` on SQLite refused with a clear error.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { SKIFF_BIN, eventually, processesMentioning } from '../support/cluster.js';
import { freePorts, requireEtcdBinary } from '../support/etcd.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

describe('skiff up --servers 3 --storage etcd', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-ha-up-'));
  let up: ManagedProcess | undefined;
  after(async () => {
    await up?.stop(30_000);
    if (!process.env.SKIFF_KEEP_TEST_DATA) rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses several servers on SQLite', () => {
    let err: { status?: number; stderr?: Buffer } | undefined;
    try {
      execFileSync(process.execPath, [SKIFF_BIN, 'up', '--servers', '3', '--data-dir', join(dataDir, 'sqlite')], { stdio: 'pipe' });
    } catch (e) {
      err = e as { status?: number; stderr?: Buffer };
    }
    assert.equal(err?.status, 2);
    assert.match(String(err?.stderr), /needs --storage etcd/);
  });

  it('starts etcd, 3 servers and 2 agents; every member is in default/kubernetes; stops everything', async () => {
    requireEtcdBinary();
    const [port] = await freePorts(1);
    const out = join(dataDir, 'up.out');
    up = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--servers', '3', '--storage', 'etcd', '--data-dir', dataDir, '--nodes', '2', '--port', String(port), '--runtime', 'simulated', '--node-status-update-frequency=1s'],
      output: out,
    });
    await eventually(() => readFileSync(out, 'utf8').includes('cluster ready'), 90_000, '"cluster ready"');
    assert.match(readFileSync(out, 'utf8'), /skiff haproxy-config/);
    const client = ApiClient.fromKubeconfig(join(dataDir, 'kubeconfig'), { timeoutMs: 5000 });
    try {
      const members = [1, 2, 3].map((i) => `127.0.0.${i}`);
      await eventually(async () => {
        const ep = await client.get<KubeObject>('/api/v1/namespaces/default/endpoints/kubernetes');
        const ips = ((ep.subsets ?? []) as { addresses?: { ip: string }[] }[]).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort();
        return JSON.stringify(ips) === JSON.stringify(members);
      }, 20_000, 'all 3 members in default/kubernetes');
      // ...and in its EndpointSlice, as upstream's servers keep both.
      await eventually(async () => {
        const slice = await client.get<KubeObject>('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes');
        const ips = ((slice.endpoints ?? []) as { addresses: string[] }[]).flatMap((e) => e.addresses).sort();
        return JSON.stringify(ips) === JSON.stringify(members) && slice.metadata.labels?.['kubernetes.io/service-name'] === 'kubernetes';
      }, 20_000, 'all 3 members in the kubernetes EndpointSlice');
      const nodes = await client.get<KubeList>('/api/v1/nodes');
      assert.deepEqual(nodes.items.map((n) => n.metadata.name).sort(), ['node-1', 'node-2']);
    } finally {
      client.close();
    }
    up.signal('SIGTERM');
    const exit = await up.exited;
    up = undefined;
    assert.equal(exit.code, 0);
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    assert.deepEqual(processesMentioning(dataDir), [], 'no etcd, server or agent process left');
  });
});
