import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PodRoutes } from '../../src/agent/pod-routes.js';
import type { Node } from '../../src/api/kinds/node.js';
import { silentLogger } from '../../src/util/log.js';

const node = (name: string, podCIDR: string | undefined, ip: string): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
  spec: podCIDR ? { podCIDR } : {},
  status: { addresses: [{ type: 'InternalIP', address: ip }] },
});

describe('pod routes (host-gw)', () => {
  it("routes each other node's pod CIDR via its address, replaces a changed one and removes a deleted node's", async () => {
    const calls: string[] = [];
    const routes = new PodRoutes({ nodeName: 'a', log: silentLogger(), ip: async (args) => void calls.push(args.join(' ')) });
    await routes.observe(node('a', '10.64.0.0/24', '10.64.255.11'));
    await routes.observe(node('b', undefined, '10.64.255.12'));
    assert.deepEqual(calls, [], 'none to itself, none before a pod CIDR');
    await routes.observe(node('b', '10.64.1.0/24', '10.64.255.12'));
    await routes.observe(node('b', '10.64.1.0/24', '10.64.255.12'));
    assert.deepEqual(calls, ['route replace 10.64.1.0/24 via 10.64.255.12'], 'once, however often the Node changes otherwise');
    await routes.observe(node('b', '10.64.1.0/24', '10.64.255.13'));
    assert.equal(calls.at(-1), 'route replace 10.64.1.0/24 via 10.64.255.13');
    await routes.deleted(node('b', '10.64.1.0/24', '10.64.255.13'));
    assert.equal(calls.at(-1), 'route del 10.64.1.0/24 via 10.64.255.13');
    assert.equal(routes.routes().size, 0);
  });

  it('leaves nodes on loopback alone: agents sharing one machine have every bridge already', async () => {
    const calls: string[] = [];
    const routes = new PodRoutes({ nodeName: 'a', log: silentLogger(), ip: async (args) => void calls.push(args.join(' ')) });
    await routes.observe(node('b', '10.64.1.0/24', '127.0.0.1'));
    assert.deepEqual(calls, []);
  });
});
