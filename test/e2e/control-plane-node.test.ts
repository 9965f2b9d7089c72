// `skiff server --with-agent`: the member's own machine as a control-plane Node, kept across a
// restart in place (SIGUSR2, an upgrade) and removed by the server's graceful stop.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestServer, eventually } from '../support/cluster.js';
import { isStatusError } from '../../src/api/errors.js';
import type { Node } from '../../src/api/kinds/node.js';

const WITH_AGENT = ['--with-agent', '--node-name', 'cp-1', '--runtime', 'simulated', '--kubelet-port', '0', '--node-status-update-frequency', '1s'];

describe('a server with its own control-plane node', () => {
  const s = new TestServer('control-plane-node');
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  async function readyNode(): Promise<Node | undefined> {
    const c = s.client();
    try {
      const n = await c.get<Node>('/api/v1/nodes/cp-1');
      return n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ? n : undefined;
    } finally {
      c.close();
    }
  }

  it('registers it labelled and tainted, keeps it over SIGUSR2, and removes it on SIGTERM', async () => {
    await s.start(WITH_AGENT);
    // The role label is the member's to set, just after its node registered (as kubeadm marks control-plane nodes).
    const node = await eventually(async () => {
      const n = await readyNode();
      return n?.metadata.labels?.['node-role.kubernetes.io/control-plane'] === '' ? n : undefined;
    }, 20_000, 'cp-1 Ready and labelled');
    assert.deepEqual(node.spec?.taints?.map((t) => `${t.key}:${t.effect}`), ['node-role.kubernetes.io/control-plane:NoSchedule']);
    assert.match(await s.k(['get', 'nodes']), /^cp-1\s+Ready\s+control-plane\s/m);

    s.kill('SIGUSR2');
    assert.equal((await s.proc!.exited).code, 75, 'a restart in place');
    await s.start(WITH_AGENT);
    // The Node is still Ready from before: wait for the new server's own agent to have taken it over.
    await eventually(() => s.logs().split('"msg":"agent started"').length === 3, 20_000, 'the second server’s node started');
    const kept = await eventually(readyNode, 20_000, 'cp-1 Ready again');
    assert.equal(kept.metadata.uid, node.metadata.uid, 'the same Node, never removed');

    await s.stop();
    assert.match(s.logs(), /"msg":"agent stopped"/);
    await s.start();
    const c = s.client();
    try {
      await assert.rejects(c.get('/api/v1/nodes/cp-1'), (e: unknown) => isStatusError(e, 'NotFound'), 'a graceful stop removes it');
    } finally {
      c.close();
    }
  });

  it('stops gracefully on a SIGTERM that comes while its node is still starting', async () => {
    await s.stop();
    // start() returns once the API answers: the server's own node is likely still registering.
    await s.start(WITH_AGENT);
    s.kill('SIGTERM');
    const exit = await s.proc!.exited;
    assert.deepEqual(exit, { code: 0, signal: null }, 'it exits itself, not killed by the signal');
    await s.start();
    const c = s.client();
    try {
      await assert.rejects(c.get('/api/v1/nodes/cp-1'), (e: unknown) => isStatusError(e, 'NotFound'), 'no Node left behind');
    } finally {
      c.close();
    }
  });
});
