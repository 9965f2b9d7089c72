// The dashboard's view of a real (in-process) API server: tiles from Nodes, Leases, pods and
// Events, and the order of what a patch tells when a Node is deleted and comes back at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiClient } from '../../src/client/rest.js';
import { ClusterView } from '../../src/dashboard/cluster-view.js';
import type { NodeTile, Patch } from '../../src/dashboard/view.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { eventually } from '../support/eventually.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const readyNode = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'node-role.kubernetes.io/worker': '' } },
  status: { allocatable: { cpu: '4', memory: '8Gi', pods: '110' }, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: new Date().toISOString(), lastTransitionTime: new Date().toISOString() }] },
});

describe('the dashboard cluster view', () => {
  let srv: InProcessServer;
  let client: ApiClient;
  let view: ClusterView;
  const stop = new AbortController();
  let listedBeforeStart: boolean | undefined;
  const watched: string[] = [];
  /** Every patch taken, in order. */
  const patches: Patch[] = [];
  const take = () => {
    const p = view.takePatch();
    if (p) patches.push(p);
    return p;
  };
  const tilesOf = (name: string, from = 0): NodeTile[] => patches.slice(from).flatMap((p) => (p.nodes ?? []).filter((t) => t.name === name));

  before(async () => {
    srv = await startInProcessServer();
    client = srv.client();
    for (const n of ['n1', 'n2']) {
      const created = await client.create<{ status?: unknown }>('/api/v1/nodes', readyNode(n));
      await client.replace(`/api/v1/nodes/${n}/status`, { ...readyNode(n), ...created, status: readyNode(n).status });
    }
    await client.create('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'x', resources: { requests: { cpu: '250m' } } }] } });
    await client.create('/api/v1/namespaces/default/pods', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'waiting' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    // What the view watches, by path.
    const watch = client.watch.bind(client);
    client.watch = (path, ...rest) => {
      watched.push(path);
      return watch(path, ...rest);
    };
    view = new ClusterView({ client, clock: systemClock, log: silentLogger(), changed: () => {}, memberProbeMs: 60_000 });
    listedBeforeStart = view.snapshot('https://example', 'admin').listed;
    await view.start(stop.signal);
  });

  after(async () => {
    stop.abort();
    client.close();
    await srv.stop();
  });

  it('says whether its watches have listed: before, an empty view is no news', () => {
    assert.equal(listedBeforeStart, false, 'a page served before the lists says it is waiting');
    assert.equal(take()?.listed, true, 'the pages already open learn it from a patch');
    assert.equal(view.snapshot('https://example', 'admin').listed, true);
  });

  it('starts from every node, with its pods counted and the unscheduled ones apart', async () => {
    take();
    const snap = view.snapshot('https://example', 'admin');
    assert.deepEqual(snap.nodes.map((t) => [t.name, t.health]).sort(), [['n1', 'Ready'], ['n2', 'Ready']]);
    const n1 = snap.nodes.find((t) => t.name === 'n1')!;
    assert.equal(n1.pods.pending, 1);
    assert.equal(n1.cpu.requested, 250);
    assert.deepEqual(n1.roles, ['worker']);
    assert.equal(snap.unscheduled, 1);
    assert.ok(snap.timeline.some((e) => e.kind === 'node-state' && e.node === 'n1' && e.state === 'Ready'));
    assert.equal(take(), undefined, 'nothing changed: no patch');
  });

  it('lists namespaces with their pods, and a namespace up close with its pods, nodes and Services', async () => {
    await client.create('/api/v1/namespaces/default/services', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
    await eventually(async () => (await view.namespaceDetail('default')).services.length === 1, 5000, 'the Service seen');
    const row = view.snapshot('https://example', 'admin').namespaces.find((r) => r.name === 'default');
    assert.deepEqual(row && [row.phase, row.pods.pending, row.services], ['Active', 2, 1]);
    const detail = await view.namespaceDetail('default');
    assert.deepEqual(detail.pods.map((p) => [p.name, p.node]), [['bound', 'n1'], ['waiting', undefined]]);
    assert.deepEqual(detail.services.map((s) => [s.name, s.ports, s.state]), [['web', '80/TCP', 'no ready endpoints']]);
    assert.deepEqual(await view.namespaceDetail('elsewhere'), { pods: [], services: [] });
    take();
  });

  it("watches no EndpointSlices: a namespace's are read when its panel asks", async () => {
    assert.ok(watched.includes('/api/v1/services'), watched.join(', '));
    assert.deepEqual(watched.filter((p) => p.includes('endpointslices')), []);
    await client.create('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }, { addresses: ['10.0.0.2'], conditions: { ready: false } }],
      ports: [{ port: 80 }],
    });
    assert.deepEqual((await view.namespaceDetail('default')).services.map((s) => s.state), ['1 of 2 endpoints ready']);
  });

  it("sends the namespace rows again when a pod's phase changes them, and not for a change they do not show", async () => {
    const path = '/api/v1/namespaces/default/pods/bound/status';
    const bound = await client.get<{ metadata: object; spec: object }>('/api/v1/namespaces/default/pods/bound');
    await client.replace(path, { ...bound, status: { phase: 'Running' } });
    const rows = await eventually(() => take()?.namespaces, 5000, 'a patch with the namespace rows');
    assert.deepEqual(rows.find((r) => r.name === 'default')?.pods, { running: 1, pending: 1, succeeded: 0, failed: 0, terminating: 0 });
    const running = await client.get<{ metadata: object; spec: object }>('/api/v1/namespaces/default/pods/bound');
    await client.replace(path, { ...running, status: { phase: 'Running', containerStatuses: [{ name: 'c', ready: true, restartCount: 0, image: 'x', imageID: '' }] } });
    await eventually(async () => (await view.namespaceDetail('default')).pods.find((p) => p.name === 'bound')?.ready === '1/1' || undefined, 5000, 'the pod seen Ready');
    assert.equal(take()?.namespaces, undefined);
  });

  it('tells a node deleted and re-created between two patches as gone, then back, in that order', async () => {
    const from = patches.length;
    await client.delete('/api/v1/nodes/n2');
    await client.create('/api/v1/nodes', readyNode('n2'));
    await client.create('/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'n2.rereg', namespace: 'default' },
      involvedObject: { kind: 'Node', name: 'n2' },
      reason: 'NodeReregistered',
      message: 'Node n2 was deleted from the API while its agent ran',
      type: 'Normal',
      count: 1,
    });
    await eventually(() => {
      take();
      return tilesOf('n2', from).some((t) => t.reregistrations === 1);
    }, 5000, 'the re-registration counted');
    const states = tilesOf('n2', from).map((t) => t.health);
    assert.equal(states[0], 'absent', 'told gone first');
    assert.ok(states.slice(1).includes('Unknown') || states.slice(1).includes('Ready'), 'then back');
    const back = tilesOf('n2', from).at(-1)!;
    assert.ok(back.returnedAt !== undefined, 'the row says it came back');
    const timeline = patches.slice(from).flatMap((p) => p.timeline ?? []).filter((e) => 'node' in e && e.node === 'n2').map((e) => (e.kind === 'node-state' ? e.state : e.kind));
    assert.deepEqual(timeline.slice(0, 3), ['node-deleted', 'absent', 'node-registered']);
  });

  it('keeps recent Warning events and marks the timeline with them', async () => {
    await client.create('/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'bound.fail', namespace: 'default' },
      involvedObject: { kind: 'Pod', name: 'bound', namespace: 'default' },
      reason: 'FailedMount',
      message: 'volume not found',
      type: 'Warning',
      count: 1,
    });
    await eventually(() => {
      take();
      return patches.some((p) => p.warnings?.some((w) => w.reason === 'FailedMount' && w.object === 'Pod/bound'));
    }, 5000, 'the warning listed');
    assert.ok(patches.some((p) => p.timeline?.some((e) => e.kind === 'event' && e.reason === 'FailedMount')));
  });
});
