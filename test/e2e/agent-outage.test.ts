// N11: the API server goes away under a running agent — pods keep running, the agent retries with
// back-off, and catches up when the server is back. The agent also starts with a dead server URL
// first in its list and fails over to the live one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { TestAgent, TestServer, TEST_JOIN_TOKEN, containerPids, eventually } from '../support/cluster.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { Node } from '../../src/api/kinds/node.js';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

describe('agent with the API server unreachable (N11)', () => {
  const s = new TestServer('agent-outage');
  let serverArgs: string[] = [];
  let agent: TestAgent;
  before(async () => {
    serverArgs = ['--token', TEST_JOIN_TOKEN, '--listen', `127.0.0.1:${await freePort()}`];
    await s.start(serverArgs);
  });
  after(async () => {
    await agent?.stop();
    await s.stop();
    s.cleanup();
  });

  it('keeps pods running through an outage and catches up afterwards', async () => {
    agent = new TestAgent(s, 'e2e-outage');
    const dead = `https://127.0.0.1:${await freePort()}`;
    await agent.start([], { servers: [dead, agent.serverUrl] });
    await s.k(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'outage-pod' }, spec: { nodeName: 'e2e-outage', containers: [{ name: 'c', image: 'x', command: ['sleep', '3600'] }] } }),
    });
    const client = s.client();
    const pod = await eventually(async () => {
      const p = await client.get<Pod>('/api/v1/namespaces/default/pods/outage-pod');
      return p.status?.phase === 'Running' ? p : undefined;
    }, 15_000, 'pod Running');
    client.close();
    const pids = containerPids(pod.metadata.uid!);
    assert.equal(pids.length, 1);

    s.kill('SIGKILL');
    await s.proc!.exited;
    await eventually(() => agent.logLines('lease renewal failing; retrying with back-off').length > 0, 15_000, 'agent notices the outage');
    // Two more renew periods without the API: nothing is killed for lack of it.
    const failingSince = Date.now();
    await eventually(() => Date.now() - failingSince > 2000 && agent.logLines('lease renewal failing; retrying with back-off').length === 1, 10_000, 'outage continues, logged once');
    assert.deepEqual(containerPids(pod.metadata.uid!), pids);
    assert.equal(agent.proc!.child.exitCode, null);

    await s.start(serverArgs);
    await eventually(() => agent.logLines('lease renewal recovered').length > 0, 20_000, 'lease renewal recovers');
    const c2 = s.client();
    try {
      const node = await c2.get<Node>('/api/v1/nodes/e2e-outage');
      assert.ok(node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      const p = await c2.get<Pod>('/api/v1/namespaces/default/pods/outage-pod');
      assert.equal(p.status?.phase, 'Running');
      assert.equal(p.status?.containerStatuses?.[0]?.restartCount, 0);
      assert.deepEqual(containerPids(pod.metadata.uid!), pids);
      // Caught up: a deletion after the outage reaches the agent through the re-established watch.
      await c2.delete('/api/v1/namespaces/default/pods/outage-pod');
      await eventually(() => containerPids(pod.metadata.uid!).length === 0, 15_000, 'pod stopped after deletion');
      await eventually(async () => {
        try {
          await c2.get('/api/v1/namespaces/default/pods/outage-pod');
          return false;
        } catch (e) {
          return (e as { code?: number }).code === 404;
        }
      }, 15_000, 'pod removed by the agent after termination');
    } finally {
      c2.close();
    }
  });
});
