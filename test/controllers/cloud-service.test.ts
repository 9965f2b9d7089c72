import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CloudServiceController, LOAD_BALANCER_CLEANUP_FINALIZER, loadBalancerName } from '../../src/controllers/cloud-service.js';
import type { CloudProvider, LoadBalancerRequest } from '../../src/cloud/provider.js';
import type { Service } from '../../src/api/kinds/service.js';
import { systemClock } from '../../src/util/clock.js';
import { addNode, events, harness, until, type Harness } from './node-lifecycle-harness.js';

/** A cloud with load balancers only: what was asked of them, an address each. */
function fakeCloud(): { cloud: CloudProvider; live: Map<string, LoadBalancerRequest> } {
  const live = new Map<string, LoadBalancerRequest>();
  const addresses = new Map<string, string>();
  const cloud = {
    name: () => 'fake',
    loadBalancers: () => ({
      ensure: async (req: LoadBalancerRequest) => {
        live.set(req.name, req);
        if (!addresses.has(req.name)) addresses.set(req.name, `127.0.100.${addresses.size + 1}`);
        return { ip: addresses.get(req.name)! };
      },
      delete: async (name: string) => void live.delete(name),
    }),
  } as unknown as CloudProvider;
  return { cloud, live };
}

describe('service controller (LoadBalancer)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('ensures a load balancer to the ready nodes, sets the ingress address and the cleanup finalizer, follows the nodes, and cleans up on delete', async () => {
    h = await harness({ clock: systemClock });
    const c = h.client;
    const { cloud, live } = fakeCloud();
    for (const [n, ip] of [['a', '10.64.255.11'], ['b', '10.64.255.12']] as const) {
      await addNode(c, h.clock, n);
      await c.patch(`/api/v1/nodes/${n}/status`, { status: { addresses: [{ type: 'InternalIP', address: ip }] } }, 'strategic');
    }
    h.start(new CloudServiceController(cloud));
    const S = '/api/v1/namespaces/default/services';
    await c.create(S, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer', selector: { app: 'x' }, ports: [{ port: 80 }] } });
    await c.create(S, { metadata: { name: 'other' }, spec: { type: 'LoadBalancer', loadBalancerClass: 'example.com/lb', ports: [{ port: 80 }] } });
    const svc = await until(async () => {
      const s = await c.get<Service>(`${S}/lb`);
      return s.status?.loadBalancer?.ingress?.[0]?.ip ? s : undefined;
    }, 'an ingress address');
    assert.equal(svc.status!.loadBalancer!.ingress![0]!.ip, '127.0.100.1');
    assert.ok(svc.metadata.finalizers?.includes(LOAD_BALANCER_CLEANUP_FINALIZER));
    const req = live.get(loadBalancerName(svc))!;
    assert.deepEqual(req.nodes, ['10.64.255.11', '10.64.255.12']);
    assert.deepEqual(req.ports, [{ port: 80, protocol: 'TCP', nodePort: svc.spec!.ports![0]!.nodePort }]);
    assert.match(loadBalancerName(svc), /^a[0-9a-f]{31}$/);
    await until(async () => (await events(c, 'EnsuredLoadBalancer')).length > 0, 'EnsuredLoadBalancer');
    const other = await c.get<Service>(`${S}/other`);
    assert.equal(other.metadata.finalizers, undefined, 'another class is not ours');
    assert.equal(live.size, 1);
    // A node leaves: the targets follow.
    await c.delete('/api/v1/nodes/b');
    await until(() => live.get(loadBalancerName(svc))?.nodes.length === 1, 'the load balancer without b');
    // Deleted: the load balancer goes, then the finalizer, then the Service.
    await c.delete(`${S}/lb`);
    await until(async () => (await c.get(`${S}/lb`).then(() => false, () => true)), 'the Service gone');
    assert.equal(live.size, 0);
    await until(async () => (await events(c, 'DeletedLoadBalancer')).length > 0, 'DeletedLoadBalancer');
  });
});
