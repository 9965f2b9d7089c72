// Lease renewal and node status cadence (N2), on a FakeClock against an in-memory API.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/util/clock.js';
import { LeaseRenewer } from '../../src/agent/lease-renewer.js';
import { StatusReporter } from '../../src/agent/status-reporter.js';
import { leasePath, leasesPath, nodePath } from '../../src/agent/api.js';
import { currentConditions, READY, withTimes } from '../../src/agent/node-object.js';
import type { Lease } from '../../src/api/kinds/lease.js';
import type { NodeStatus } from '../../src/api/kinds/node.js';
import { FakeApi, captureLogger, settle } from './fake-api.js';

function setup() {
  const api = new FakeApi();
  const clock = new FakeClock();
  const { log, lines } = captureLogger();
  const node = api.put(nodePath('n1'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
  return { api, clock, log, lines, node };
}

describe('lease renewer', () => {
  it('renews every quarter of the lease duration, owned by the Node', async () => {
    const { api, clock, log, node } = setup();
    const missing: string[] = [];
    const r = new LeaseRenewer({ api, clock, log, nodeName: 'n1', machineId: 'm1', leaseDurationSeconds: 40, nodeUid: () => node.metadata.uid, onNodeMissing: (s) => missing.push(s) });
    const ac = new AbortController();
    const done = r.run(ac.signal);
    await clock.advance(0);
    assert.equal(api.count('POST', leasesPath()), 1);
    const lease = api.objects.get(leasePath('n1')) as Lease;
    assert.deepEqual(lease.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid }]);
    assert.equal(lease.spec?.leaseDurationSeconds, 40);
    assert.equal(lease.spec?.holderIdentity, 'n1');
    await clock.advance(9_999);
    assert.equal(api.count('PUT', leasePath('n1')), 0);
    await clock.advance(1);
    assert.equal(api.count('PUT', leasePath('n1')), 1);
    await clock.advance(30_000);
    assert.equal(api.count('PUT', leasePath('n1')), 4);
    // Renewals come from the copy last written: no GETs in steady state.
    assert.equal(api.count('GET', leasePath('n1')), 1);
    assert.equal(r.renewals, 5);
    assert.deepEqual(missing, []);
    ac.abort();
    await clock.advance(0);
    await done;
  });

  it('never creates a Lease without a live owner Node', async () => {
    const { api, clock, log, node } = setup();
    api.objects.delete(nodePath('n1'));
    const missing: string[] = [];
    const r = new LeaseRenewer({ api, clock, log, nodeName: 'n1', machineId: 'm1', leaseDurationSeconds: 40, nodeUid: () => node.metadata.uid, onNodeMissing: (s) => missing.push(s) });
    assert.equal(await r.sync(), false);
    assert.equal(api.count('POST', leasesPath()), 0);
    assert.deepEqual(missing, ['lease']);
    // And not while the keeper knows of no Node at all.
    const r2 = new LeaseRenewer({ api, clock, log, nodeName: 'n1', machineId: 'm1', leaseDurationSeconds: 40, nodeUid: () => undefined, onNodeMissing: () => {} });
    assert.equal(await r2.sync(), false);
    assert.equal(api.calls.filter((c) => c.method === 'POST').length, 0);
  });

  it('moves the Lease to a re-created Node (new UID)', async () => {
    const { api, clock, log, node } = setup();
    let uid = node.metadata.uid;
    const r = new LeaseRenewer({ api, clock, log, nodeName: 'n1', machineId: 'm1', leaseDurationSeconds: 40, nodeUid: () => uid, onNodeMissing: () => {} });
    assert.equal(await r.sync(), true);
    // The Node is deleted and re-created; the old Lease is still there (no GC yet).
    api.objects.delete(nodePath('n1'));
    const again = api.put(nodePath('n1'), { metadata: { name: 'n1' } });
    uid = again.metadata.uid;
    assert.equal(await r.sync(), true);
    const lease = api.objects.get(leasePath('n1')) as Lease;
    assert.equal(lease.metadata.ownerReferences?.[0]?.uid, again.metadata.uid);
  });

  it('backs off while the API is unreachable and logs the failure once', async () => {
    const { api, clock, log, lines, node } = setup();
    const r = new LeaseRenewer({ api, clock, log, nodeName: 'n1', machineId: 'm1', leaseDurationSeconds: 40, nodeUid: () => node.metadata.uid, onNodeMissing: () => {} });
    const ac = new AbortController();
    const done = r.run(ac.signal);
    await clock.advance(0);
    api.down = true;
    await clock.advance(60_000);
    await settle();
    const failing = lines.filter((l) => l.msg.includes('lease renewal failing'));
    assert.equal(failing.length, 1);
    // Retries are frequent (back-off capped at the renew interval), not a busy loop.
    const tries = api.calls.filter((c) => c.path.includes('leases')).length;
    assert.ok(tries > 6 && tries < 40, `tries ${tries}`);
    api.down = false;
    await clock.advance(10_000);
    await settle();
    assert.equal(lines.filter((l) => l.msg === 'lease renewal recovered').length, 1);
    ac.abort();
    await clock.advance(0);
    await done;
  });
});

describe('status reporter', () => {
  function reporter(api: FakeApi, clock: FakeClock, log: ReturnType<typeof captureLogger>['log'], extra: { classic?: boolean; ready?: () => boolean } = {}) {
    const missing: string[] = [];
    const build = (prev: NodeStatus | undefined, now: number): NodeStatus => ({
      capacity: { cpu: '2' },
      conditions: withTimes(currentConditions(extra.ready?.() === false ? { ready: false, reason: 'KubeletNotReady', message: 'x' } : READY), prev?.conditions, now),
    });
    const r = new StatusReporter({ api, clock, log, nodeName: 'n1', updateFrequencyMs: 10_000, reportFrequencyMs: 60_000, buildStatus: build, onNodeMissing: (s) => missing.push(s), classic: extra.classic ?? false });
    return { r, missing };
  }

  it('reports at once, then only on change or every report frequency', async () => {
    const { api, clock, log } = setup();
    let ready = true;
    const { r } = reporter(api, clock, log, { ready: () => ready });
    const ac = new AbortController();
    const done = r.run(ac.signal);
    await clock.advance(0);
    const statusPath = `${nodePath('n1')}/status`;
    assert.equal(api.count('PATCH', statusPath), 1, 'fast first report');
    await clock.advance(50_000);
    assert.equal(api.count('PATCH', statusPath), 1, 'unchanged status is not re-sent before the report frequency');
    await clock.advance(10_000);
    assert.equal(api.count('PATCH', statusPath), 2, 'keep-alive report after 60s');
    ready = false;
    await clock.advance(10_000);
    assert.equal(api.count('PATCH', statusPath), 3, 'a change is reported at the next update tick');
    const reported = (api.objects.get(nodePath('n1'))!.status as NodeStatus).conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(reported.status, 'False');
    assert.equal(reported.lastTransitionTime, reported.lastHeartbeatTime);
    ac.abort();
    await clock.advance(0);
    await done;
  });

  it('keeps the transition time while a condition is unchanged', async () => {
    const { api, clock, log } = setup();
    const { r } = reporter(api, clock, log);
    await r.sync();
    const first = (api.objects.get(nodePath('n1'))!.status as NodeStatus).conditions!.find((c) => c.type === 'Ready')!;
    await clock.advance(61_000);
    await r.sync();
    const second = (api.objects.get(nodePath('n1'))!.status as NodeStatus).conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(second.lastTransitionTime, first.lastTransitionTime);
    assert.notEqual(second.lastHeartbeatTime, first.lastHeartbeatTime);
  });

  it('hands a 404 to the node keeper', async () => {
    const { api, clock, log } = setup();
    api.objects.delete(nodePath('n1'));
    const { r, missing } = reporter(api, clock, log);
    assert.equal(await r.sync(), false);
    assert.deepEqual(missing, ['status']);
  });

  it('classic mode logs what the kubelet logs: 5 retries, then "Unable to update node status"', async () => {
    const { api, clock, log, lines } = setup();
    api.objects.delete(nodePath('n1'));
    const { r } = reporter(api, clock, log, { classic: true });
    await r.sync();
    await settle();
    assert.equal(lines.filter((l) => l.msg === 'Error updating node status, will retry').length, 5);
    assert.equal(lines.filter((l) => l.msg === 'Unable to update node status').length, 1);
  });
});
