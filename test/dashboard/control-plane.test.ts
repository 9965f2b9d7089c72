// The control plane as the dashboard names it: the leader by the member whose controllers hold the
// Lease, since the holder identity (hostname_uuid) is the same machine name on every member of one host.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Lease } from '../../src/api/kinds/lease.js';
import type { ApiClient } from '../../src/client/rest.js';
import { controlPlaneView } from '../../src/dashboard/control-plane.js';
import { slimLease } from '../../src/dashboard/node-tile.js';
import { APISERVER_LEASE_LABEL, APISERVER_LEASES_PATH, CONTROLLER_IDENTITY_ANNOTATION, EndpointReconciler } from '../../src/server/endpoint-reconciler.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { eventually } from '../support/eventually.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const now = new Date().toISOString();

function memberLease(address: string, identity?: string): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: `skiff-apiserver-${address.replace(/\W/g, '')}`,
      namespace: 'kube-system',
      labels: { [APISERVER_LEASE_LABEL]: 'true' },
      annotations: { 'unrelated.example/big': 'x'.repeat(100), ...(identity !== undefined ? { [CONTROLLER_IDENTITY_ANNOTATION]: identity } : {}) },
    },
    spec: { holderIdentity: address, renewTime: now, leaseDurationSeconds: 15 },
  };
}

const leaderLease = (name: string, holder: string): Lease => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: 'kube-system' },
  spec: { holderIdentity: holder, renewTime: now, leaseDurationSeconds: 15 },
});

describe('the dashboard control plane', () => {
  it('names the leader by its member, and the holder identity only when no member claims it', () => {
    // Two members of one machine: the same hostname in both identities.
    const leases = [
      memberLease('127.0.0.1:6443', 'box_1111'),
      memberLease('127.0.0.2:6443', 'box_2222'),
      memberLease('127.0.0.3:6443'),
      leaderLease('skiff-controller-manager', 'box_2222'),
      leaderLease('other-elector', 'someone-else'),
      leaderLease('released', ''),
    ].map(slimLease);
    assert.equal(leases[0]!.metadata.annotations?.['unrelated.example/big'], undefined, 'the view keeps only the annotation it reads');
    const view = controlPlaneView([], leases, new Map(), undefined);
    assert.deepEqual(
      view.leaders.map((l) => [l.name, l.holder, l.member]),
      [
        ['other-elector', 'someone-else', undefined],
        ['released', '', undefined],
        ['skiff-controller-manager', 'box_2222', '127.0.0.2:6443'],
      ],
    );
    assert.deepEqual(view.members.map((m) => m.address), ['127.0.0.1:6443', '127.0.0.2:6443', '127.0.0.3:6443']);
  });

  describe('a member says which controllers are its own', () => {
    let srv: InProcessServer;
    let client: ApiClient;
    before(async () => {
      srv = await startInProcessServer();
      client = srv.client();
    });
    after(async () => {
      client.close();
      await srv.stop();
    });

    /** Runs a member's endpoint reconciler until its Lease names `identity`. */
    async function member(identity: string): Promise<Lease> {
      const stop = new AbortController();
      const r = new EndpointReconciler({ client, clock: systemClock, log: silentLogger(), host: '127.0.0.9', port: 6443, controllerIdentity: identity, intervalMs: 50 });
      const done = r.run(stop.signal);
      try {
        return await eventually(async () => {
          const list = await client.get<{ items: Lease[] }>(APISERVER_LEASES_PATH, { query: { labelSelector: `${APISERVER_LEASE_LABEL}=true` } });
          return list.items.find((l) => l.metadata.annotations?.[CONTROLLER_IDENTITY_ANNOTATION] === identity);
        }, 10_000, `the endpoint Lease naming ${identity}`);
      } finally {
        stop.abort();
        await done;
      }
    }

    it('on the Lease it creates, and again on the one it finds after a restart', async () => {
      const first = await member('box_aaaa');
      const second = await member('box_bbbb');
      assert.equal(second.metadata.name, first.metadata.name, 'the same Lease, renewed with the new identity');
      const view = controlPlaneView([], [second, leaderLease('skiff-controller-manager', 'box_bbbb')].map(slimLease), new Map(), undefined);
      assert.equal(view.leaders[0]?.member, '127.0.0.9:6443');
    });
  });
});
