// The self-healing Node (N3), identity (N4) and classic mode (N13), against an in-memory API.
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { FakeClock } from '../../src/util/clock.js';
import { NodeKeeper } from '../../src/agent/node-keeper.js';
import { EventRecorder } from '../../src/agent/events.js';
import { AgentStateDir } from '../../src/agent/state-dir.js';
import { MACHINE_ID_ANNOTATION, RETIRE_ANNOTATION, leasePath, nodePath } from '../../src/agent/api.js';
import { microTime } from '../../src/util/time.js';
import { NodeNameTakenError, adoptionRefusal, leaseIsLive } from '../../src/agent/registration.js';
import type { NodeConfig } from '../../src/agent/node-object.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { Lease } from '../../src/api/kinds/lease.js';
import { FakeApi, captureLogger, settle, tempDir } from './fake-api.js';
import { SHUTDOWN_CORDON_ANNOTATION } from '../../src/agent/drain.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function cfg(machineId = 'a'.repeat(32)): NodeConfig {
  return { nodeName: 'n1', machineId, nodeIP: '127.0.0.1', runtime: 'simulated', labels: { flag: 'x' }, taints: [{ key: 'boot', effect: 'NoSchedule' }], capacity: { cpu: '2', pods: '10' }, kubeletPort: 10250 };
}

function keeper(opts: { api?: FakeApi; clock?: FakeClock; reregister?: boolean; dir?: string; machineId?: string } = {}) {
  const api = opts.api ?? new FakeApi();
  const clock = opts.clock ?? new FakeClock();
  const { log, lines } = captureLogger();
  const dir = opts.dir ?? tempDir();
  dirs.push(dir);
  const state = new AgentStateDir(dir);
  const changed: Node[] = [];
  const retired: Node[] = [];
  const k = new NodeKeeper({
    api,
    clock,
    log,
    cfg: cfg(opts.machineId),
    state,
    events: new EventRecorder(api, clock, log, 'n1'),
    reregister: opts.reregister ?? true,
    initialStatus: () => ({ conditions: [{ type: 'Ready', status: 'True' }] }),
    onNodeChanged: (n) => changed.push(n),
    onRetire: (n) => retired.push(n),
  });
  return { api, clock, log, lines, k, changed, retired, dir };
}

function liveNode(api: FakeApi): Node {
  return api.objects.get(nodePath('n1')) as Node;
}

describe('node keeper', () => {
  it('registers with flag labels and taints, machine id annotation and default labels', async () => {
    const { api, k } = keeper();
    const node = await k.register(new AbortController().signal);
    assert.equal(node.metadata.labels?.flag, 'x');
    assert.equal(node.metadata.labels?.['kubernetes.io/hostname'], 'n1');
    assert.ok(node.metadata.labels?.['kubernetes.io/os']);
    assert.equal(node.metadata.annotations?.[MACHINE_ID_ANNOTATION], 'a'.repeat(32));
    assert.deepEqual(node.spec?.taints, [{ key: 'boot', effect: 'NoSchedule' }]);
    assert.equal(k.state, 'registered');
    assert.equal(k.uid, liveNode(api).metadata.uid);
  });

  it("undoes its own shutdown cordon when the Node outlived the shutdown, and leaves an operator's cordon", async () => {
    const { api, k } = keeper();
    await k.register(new AbortController().signal);
    const node = liveNode(api);
    // The last shutdown cordoned and marked the node, then could not delete it.
    api.put(nodePath('n1'), { ...node, metadata: { ...node.metadata, annotations: { ...node.metadata.annotations, [SHUTDOWN_CORDON_ANNOTATION]: 'true' } }, spec: { ...node.spec, unschedulable: true } } as Node);
    const again = keeper({ api });
    const adopted = await again.k.register(new AbortController().signal);
    assert.equal(adopted.spec?.unschedulable, undefined);
    assert.equal(liveNode(api).metadata.annotations?.[SHUTDOWN_CORDON_ANNOTATION], undefined);
    // A cordon without the mark is someone's decision.
    api.put(nodePath('n1'), { ...liveNode(api), spec: { ...liveNode(api).spec, unschedulable: true } } as Node);
    const third = keeper({ api });
    assert.equal((await third.k.register(new AbortController().signal)).spec?.unschedulable, true);
  });

  it('re-creates a deleted Node with the labels, annotations, taints and cordon it last observed', async () => {
    const { api, k, lines, changed } = keeper();
    await k.register(new AbortController().signal);
    // An operator labels, annotates, taints and cordons the node; the watch delivers it.
    const edited = api.put(nodePath('n1'), {
      ...liveNode(api),
      metadata: { ...liveNode(api).metadata, labels: { ...liveNode(api).metadata.labels, team: 'a' }, annotations: { ...liveNode(api).metadata.annotations, note: 'keep' } },
      spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }], unschedulable: true },
    } as Node);
    k.observedNode(edited as Node);
    const oldUid = edited.metadata.uid;
    api.objects.delete(nodePath('n1'));
    k.deletedNode(edited as Node);
    await k.check('test');
    const again = liveNode(api);
    assert.notEqual(again.metadata.uid, oldUid);
    assert.equal(again.metadata.labels?.team, 'a');
    assert.equal(again.metadata.annotations?.note, 'keep');
    // Cordoned: re-created with the matching taint from the first moment, as the kubelet registers.
    assert.deepEqual(again.spec?.taints, [{ key: 'k', value: 'v', effect: 'NoSchedule' }, { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }]);
    assert.equal(again.spec?.unschedulable, true);
    assert.equal(k.uid, again.metadata.uid);
    assert.equal(changed.at(-1)?.metadata.uid, again.metadata.uid, 'lease and status are told about the new Node');
    await settle();
    assert.equal(lines.filter((l) => l.msg === 'node deleted from the API; re-registering').length, 1);
    assert.equal(lines.filter((l) => l.msg === 'node re-registered').length, 1);
    const events = [...api.objects.values()].filter((o) => o.kind === 'Event');
    assert.equal(events.length, 1);
    assert.equal((events[0] as { reason?: string }).reason, 'NodeReregistered');
  });

  it('does not restore taints the control plane derives from conditions (not-ready, unreachable)', async () => {
    const { api, k } = keeper();
    await k.register(new AbortController().signal);
    const n = liveNode(api);
    k.observedNode(api.put(nodePath('n1'), { ...n, spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, { key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }, { key: 'mine', effect: 'NoSchedule' }] } } as Node) as Node);
    api.objects.delete(nodePath('n1'));
    await k.check('watch');
    assert.deepEqual(liveNode(api).spec?.taints?.map((t) => t.key), ['node.kubernetes.io/out-of-service', 'mine']);
  });

  it('a cache miss is not NotFound: nothing is re-created while the Node exists or the API cannot say', async () => {
    const { api, k } = keeper();
    const node = await k.register(new AbortController().signal);
    // A DELETED event (or a stale cache) but the live GET finds the Node: nothing to do.
    k.deletedNode(node);
    await k.check('watch');
    assert.equal(api.count('POST', '/api/v1/nodes'), 1);
    // The API is unreachable: no conclusion, no create.
    api.objects.delete(nodePath('n1'));
    api.down = true;
    await k.check('lease');
    api.down = false;
    assert.equal(api.count('POST', '/api/v1/nodes'), 1);
    assert.equal(k.state, 'registered');
  });

  it('coalesces many reports into one re-creation and one log line', async () => {
    const { api, k, lines } = keeper();
    await k.register(new AbortController().signal);
    api.objects.delete(nodePath('n1'));
    await Promise.all([k.check('watch'), k.check('lease'), k.check('status'), k.check('watch')]);
    assert.equal(api.count('POST', '/api/v1/nodes'), 2, 'one registration + one re-creation');
    await settle();
    assert.equal(lines.filter((l) => l.msg === 'node deleted from the API; re-registering').length, 1);
  });

  it('classic mode (--reregister=false) never re-creates the Node', async () => {
    const { api, k } = keeper({ reregister: false });
    await k.register(new AbortController().signal);
    api.objects.delete(nodePath('n1'));
    await k.check('watch');
    await k.check('status');
    assert.equal(api.objects.has(nodePath('n1')), false);
    assert.equal(k.state, 'missing');
    assert.equal(k.uid, undefined);
  });

  it('restores the last observed Node after an agent restart (persisted in the data dir)', async () => {
    const first = keeper();
    await first.k.register(new AbortController().signal);
    const n = liveNode(first.api);
    first.k.observedNode(first.api.put(nodePath('n1'), { ...n, spec: { taints: [{ key: 'gpu', effect: 'NoExecute' }] }, metadata: { ...n.metadata, labels: { ...n.metadata.labels, zone: 'z1' } } } as Node) as Node);
    // The agent is down while the Node is deleted; a new agent process starts on the same data dir.
    first.api.objects.delete(nodePath('n1'));
    const second = keeper({ api: first.api, dir: first.dir });
    const node = await second.k.register(new AbortController().signal);
    assert.equal(node.metadata.labels?.zone, 'z1');
    assert.deepEqual(node.spec?.taints, [{ key: 'gpu', effect: 'NoExecute' }]);
  });

  it('does not persist a retire request as state, and signals it once', async () => {
    const { api, k, retired, dir } = keeper();
    await k.register(new AbortController().signal);
    const n = liveNode(api);
    const marked = api.put(nodePath('n1'), { ...n, metadata: { ...n.metadata, annotations: { ...n.metadata.annotations, [RETIRE_ANNOTATION]: 'true' } } } as Node) as Node;
    k.observedNode(marked);
    k.observedNode(marked);
    assert.equal(retired.length, 1);
    const persisted = new AgentStateDir(dir).readObservedNode('n1');
    assert.equal(persisted?.annotations[RETIRE_ANNOTATION], undefined);
  });

  it('leaving stops re-registration', async () => {
    const { api, k } = keeper();
    await k.register(new AbortController().signal);
    k.leave();
    api.objects.delete(nodePath('n1'));
    await k.check('watch');
    assert.equal(api.objects.has(nodePath('n1')), false);
  });
});

describe('N4: a Node registered by another machine', () => {
  function otherMachinesNode(api: FakeApi, clock: FakeClock, renewedAgoMs: number | undefined): void {
    const node = api.put(nodePath('n1'), { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', annotations: { [MACHINE_ID_ANNOTATION]: 'b'.repeat(32) } } });
    if (renewedAgoMs !== undefined) {
      api.put(leasePath('n1'), {
        metadata: { name: 'n1', namespace: 'kube-node-lease', ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: node.metadata.uid! }] },
        spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: microTime(clock.now() - renewedAgoMs) },
      } as Lease);
    }
  }

  it('refuses while that Node\'s Lease is live, with a clear error', async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    otherMachinesNode(api, clock, 5_000);
    const { k } = keeper({ api, clock });
    await assert.rejects(k.register(new AbortController().signal), (e: unknown) => {
      assert.ok(e instanceof NodeNameTakenError);
      assert.match(e.message, /belongs to another machine .* refusing to adopt it/);
      return true;
    });
    assert.equal((api.objects.get(nodePath('n1')) as Node).metadata.annotations?.[MACHINE_ID_ANNOTATION], 'b'.repeat(32));
  });

  it('adopts it once the Lease has expired (or there is none)', async () => {
    for (const ago of [41_000, undefined]) {
      const api = new FakeApi();
      const clock = new FakeClock();
      otherMachinesNode(api, clock, ago);
      const { k } = keeper({ api, clock });
      const node = await k.register(new AbortController().signal);
      assert.equal(node.metadata.annotations?.[MACHINE_ID_ANNOTATION], 'a'.repeat(32));
    }
  });

  it('leaseIsLive and adoptionRefusal decide on renewTime + duration', () => {
    const now = Date.UTC(2026, 0, 1);
    const lease = (ago: number): Lease => ({ metadata: { name: 'n1' }, spec: { leaseDurationSeconds: 40, renewTime: microTime(now - ago) } });
    assert.equal(leaseIsLive(lease(39_000), now), true);
    assert.equal(leaseIsLive(lease(40_001), now), false);
    assert.equal(leaseIsLive(undefined, now), false);
    const mine: Node = { metadata: { name: 'n1', annotations: { [MACHINE_ID_ANNOTATION]: 'same' } } };
    assert.equal(adoptionRefusal(mine, lease(1000), 'same', now), undefined);
    const unmarked: Node = { metadata: { name: 'n1' } };
    assert.equal(adoptionRefusal(unmarked, lease(1000), 'same', now), undefined);
  });
});
