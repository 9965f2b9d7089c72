// `skiff up --cloud local --node-group MIN:MAX:GROUP`: the cloud and the autoscaler start with the
// cluster, the first MIN instances of each group are its nodes, and Ctrl-C takes every machine down.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';
import { ApiClient } from '../../src/client/rest.js';
import { SKIFF_BIN, eventually, processesMentioning } from '../support/cluster.js';
import type { KubeList } from '../../src/api/types.js';
import type { Node } from '../../src/api/kinds/node.js';

describe('skiff up with a local cloud', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'skiff-up-cloud-'));
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
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts the cloud with MIN instances per group as the nodes, and stops every machine on SIGINT', async () => {
    const out = join(dataDir, 'up.out');
    up = startProcess({
      name: 'up',
      command: process.execPath,
      args: [SKIFF_BIN, 'up', '--data-dir', dataDir, '--port', '0', '--runtime', 'simulated', '--cloud', 'local', '--node-group', '2:4:pool', '--instance-type', 'cpu=2,memory=4Gi,pods=50', '--node-status-update-frequency=1s'],
      output: out,
    });
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
    up.signal('SIGINT');
    await up.exited;
    assert.match(readFileSync(out, 'utf8'), /cluster stopped/);
    const state = JSON.parse(readFileSync(join(dataDir, 'cloud', 'cloud.json'), 'utf8')) as { instances: { state: string }[] };
    assert.deepEqual(state.instances.map((i) => i.state), ['Terminated', 'Terminated']);
    assert.deepEqual(processesMentioning(dataDir), [], 'no machine left running');
  });
});
