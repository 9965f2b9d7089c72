// core/v1 ReplicationControllers: the ReplicaSet controller keeps them too, with their map
// selector, their own ownerReferences and events, and upstream's v1 defaults (selector and labels
// from the template, pods orphaned by a delete that names no policy).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isStatusError } from '../../src/api/errors.js';
import type { ReplicationController } from '../../src/api/kinds/replicationcontroller.js';
import { REPLICATION_CONTROLLERS, ReplicaSetController } from '../../src/controllers/replicaset.js';
import { CONTAINERS, eventually, events, markReady, nsPath, pods, startControllers, startHarness, type Harness } from './workload-harness.js';

const rcPath = (ns: string, name?: string) => nsPath(ns, 'replicationcontrollers', name, 'v1');

function rc(name: string, replicas: number, labels: Record<string, string>): ReplicationController {
  // No selector and no labels: both come from the template, as upstream defaults them.
  return { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name }, spec: { replicas, template: { metadata: { labels }, spec: { containers: CONTAINERS('nginx:1.27') } } } };
}

describe('ReplicationController', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  it('defaults its selector and labels from the template and validates as upstream', async () => {
    const ns = await h.namespace('rc-validate');
    const created = await h.client.create<ReplicationController>(rcPath(ns), rc('d', 2, { app: 'd' }));
    assert.deepEqual(created.spec?.selector, { app: 'd' });
    assert.deepEqual(created.metadata.labels, { app: 'd' });
    assert.equal(created.metadata.generation, 1);
    const bad = { ...rc('bad', -1, { app: 'b' }), spec: { replicas: -1, selector: { app: 'other' }, template: { metadata: { labels: { app: 'b' } }, spec: { restartPolicy: 'OnFailure', containers: CONTAINERS('x') } } } };
    await assert.rejects(h.client.create(rcPath(ns), bad), (e: unknown) => {
      assert.ok(isStatusError(e, 'Invalid'));
      assert.match(e.message, /spec\.replicas: Invalid value: -1: must be greater than or equal to 0/);
      assert.match(e.message, /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/);
      assert.match(e.message, /spec\.template\.spec\.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"/);
      return true;
    });
    await assert.rejects(h.client.create(rcPath(ns), { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'empty' }, spec: {} }), (e: unknown) => {
      assert.ok(isStatusError(e, 'Invalid'));
      assert.match(e.message, /spec\.selector: Required value/);
      assert.match(e.message, /spec\.template: Required value/);
      return true;
    });
    // The selector may change on update (a ReplicaSet's may not).
    const cur = await h.client.get<ReplicationController>(rcPath(ns, 'd'));
    const labels = { app: 'd', v: '2' };
    await h.client.replace(rcPath(ns, 'd'), { ...cur, spec: { ...cur.spec, selector: labels, template: { ...cur.spec!.template, metadata: { labels } } } });
  });

  it('keeps its replicas, reports status and serves a Scale with a string selector', async () => {
    const ns = await h.namespace('rc-scale');
    const running = startControllers(h.client, [new ReplicaSetController(REPLICATION_CONTROLLERS)]);
    try {
      const created = await h.client.create<ReplicationController>(rcPath(ns), rc('web', 3, { app: 'web', tier: 'front' }));
      const three = await eventually(async () => {
        const ps = await pods(h.client, ns);
        return ps.length === 3 && ps;
      }, 5000, '3 pods');
      for (const p of three) {
        assert.match(p.metadata.name!, /^web-[a-z0-9]{5}$/);
        assert.deepEqual(p.metadata.ownerReferences, [{ apiVersion: 'v1', kind: 'ReplicationController', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true }]);
      }
      await markReady(h.client, three[0]!);
      await eventually(async () => {
        const s = (await h.client.get<ReplicationController>(rcPath(ns, 'web'))).status;
        return s?.replicas === 3 && s.fullyLabeledReplicas === 3 && s.readyReplicas === 1 && s.availableReplicas === 1 && s.observedGeneration === 1;
      }, 5000, 'status 3/3 ready 1');
      const scale = await h.client.get<{ kind: string; apiVersion: string; spec: { replicas: number }; status: { replicas: number; selector: string } }>(`${rcPath(ns, 'web')}/scale`);
      assert.equal(scale.kind, 'Scale');
      assert.equal(scale.apiVersion, 'autoscaling/v1');
      assert.deepEqual(scale.status, { replicas: 3, selector: 'app=web,tier=front' });
      // kubectl scale rc: a merge patch of the Scale.
      await h.client.patch(`${rcPath(ns, 'web')}/scale`, { spec: { replicas: 1 } }, 'merge');
      await eventually(async () => (await pods(h.client, ns)).filter((p) => !p.metadata.deletionTimestamp).length === 1, 5000, 'scaled to 1');
      // Events are recorded after the deletes they report, in the background: wait for them.
      const recorded = (reason: string) => async () => (await events(h.client, ns)).some((e) => e.reason === reason && e.involvedObject.kind === 'ReplicationController');
      await eventually(recorded('SuccessfulCreate'), 5000, 'a SuccessfulCreate event');
      await eventually(recorded('SuccessfulDelete'), 5000, 'a SuccessfulDelete event');
    } finally {
      await running.stop();
    }
  });

  it('is deleted with its pods orphaned when the delete names no policy (core/v1 default)', async () => {
    const ns = await h.namespace('rc-orphan');
    await h.client.create(rcPath(ns), rc('keep', 0, { app: 'keep' }));
    await h.client.delete(rcPath(ns, 'keep'));
    // No garbage collector runs here: the orphan finalizer holds the RC until one does.
    const held = await h.client.get<ReplicationController>(rcPath(ns, 'keep'));
    assert.deepEqual(held.metadata.finalizers, ['orphan']);
    await h.client.create(rcPath(ns), rc('gone', 0, { app: 'gone' }));
    await h.client.delete(rcPath(ns, 'gone'), { propagationPolicy: 'Background' });
    await assert.rejects(h.client.get(rcPath(ns, 'gone')), (e: unknown) => isStatusError(e, 'NotFound'));
  });
});
