import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Deployment, DeploymentStrategy } from '../../src/api/kinds/deployment.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ReplicaSet } from '../../src/api/kinds/replicaset.js';
import { DeploymentController } from '../../src/controllers/deployment.js';
import { newRSNewReplicas, proportionalSizes, resolveFenceposts } from '../../src/controllers/deployment-rollout.js';
import { templateHash } from '../../src/controllers/pod-control.js';
import { ReplicaSetController } from '../../src/controllers/replicaset.js';
import {
  CONTAINERS,
  eventually,
  events,
  isReady,
  list,
  markReady,
  nsPath,
  pods,
  simulateKubelet,
  startControllers,
  startHarness,
  watchAll,
  type Harness,
} from './workload-harness.js';

interface DeploymentOptions {
  replicas?: number;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  revisionHistoryLimit?: number;
  progressDeadlineSeconds?: number;
}

function deployment(name: string, o: DeploymentOptions = {}): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: o.replicas ?? 2,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: CONTAINERS('nginx:1.27') } },
      ...(o.strategy ? { strategy: o.strategy } : {}),
      ...(o.minReadySeconds !== undefined ? { minReadySeconds: o.minReadySeconds } : {}),
      ...(o.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: o.revisionHistoryLimit } : {}),
      ...(o.progressDeadlineSeconds !== undefined ? { progressDeadlineSeconds: o.progressDeadlineSeconds } : {}),
    },
  };
}

/** kubectl's DeploymentStatusViewer: true once `kubectl rollout status` would print "successfully rolled out". */
function rolledOut(d: Deployment): boolean {
  const s = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (s.observedGeneration ?? 0)) return false;
  const progressing = (s.conditions ?? []).find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') throw new Error(`deployment "${d.metadata.name}" exceeded its progress deadline`);
  const want = d.spec?.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  return updated >= want && (s.replicas ?? 0) <= updated && (s.availableReplicas ?? 0) >= updated;
}

const REVISION = 'deployment.kubernetes.io/revision';

describe('Deployment controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const getD = (ns: string, name: string) => h.client.get<Deployment>(nsPath(ns, 'deployments', name));
  const replicaSets = (ns: string) => list<ReplicaSet>(h.client, nsPath(ns, 'replicasets'));
  const waitRolledOut = (ns: string, name: string, ms = 10_000) =>
    eventually(async () => {
      const d = await getD(ns, name);
      return rolledOut(d) && d;
    }, ms, `rollout of ${name}`);
  const setImage = (ns: string, name: string, image: string) =>
    h.client.patch(nsPath(ns, 'deployments', name), { spec: { template: { spec: { containers: CONTAINERS(image) } } } }, 'strategic');

  it('creates <name>-<pod-template-hash> at revision 1, reports status, and scales', async () => {
    const ns = await h.namespace('dep-create');
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    try {
      const created = await h.client.create<Deployment>(nsPath(ns, 'deployments'), deployment('web', { replicas: 3 }));
      const d = await waitRolledOut(ns, 'web');
      const [rs, ...rest] = await replicaSets(ns);
      assert.equal(rest.length, 0);
      const hash = templateHash(created.spec?.template);
      assert.equal(rs!.metadata.name, `web-${hash}`, 'named by a hash of the template, stable across restarts');
      assert.equal(rs!.metadata.labels?.['pod-template-hash'], hash);
      assert.deepEqual(rs!.spec?.selector, { matchLabels: { app: 'web', 'pod-template-hash': hash } });
      assert.deepEqual(rs!.metadata.ownerReferences, [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: created.metadata.uid, controller: true, blockOwnerDeletion: true },
      ]);
      assert.equal(rs!.metadata.annotations?.[REVISION], '1');
      assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '3');
      assert.equal(rs!.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '4');
      assert.equal(d.metadata.annotations?.[REVISION], '1');
      const s = d.status!;
      assert.deepEqual([s.replicas, s.updatedReplicas, s.readyReplicas, s.availableReplicas, s.unavailableReplicas ?? 0], [3, 3, 3, 3, 0]);
      const cond = (t: string) => s.conditions?.find((c) => c.type === t);
      assert.equal(cond('Available')?.reason, 'MinimumReplicasAvailable');
      assert.equal(cond('Progressing')?.status, 'True');
      assert.equal(cond('Progressing')?.reason, 'NewReplicaSetAvailable');
      assert.ok((await pods(h.client, ns)).every((p) => p.metadata.labels?.['pod-template-hash'] === hash));
      assert.ok((await events(h.client, ns, 'web')).some((e) => e.reason === 'ScalingReplicaSet' && e.message === `Scaled up replica set web-${hash} from 0 to 3`));

      // kubectl scale deployment web --replicas=5
      await h.client.patch(nsPath(ns, 'deployments', 'web/scale'), { spec: { replicas: 5 } }, 'merge');
      const scaled = await waitRolledOut(ns, 'web');
      assert.equal(scaled.status?.availableReplicas, 5);
      assert.equal((await replicaSets(ns)).length, 1, 'scaling is not a new revision');
      assert.equal(scaled.metadata.annotations?.[REVISION], '1');
    } finally {
      running.stop();
      kubelet.stop();
    }
  });

  it('rolls out within maxSurge/maxUnavailable at every step, keeps history, undoes and restarts', async () => {
    const ns = await h.namespace('dep-roll');
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    const violations: string[] = [];
    const watchers: { stop(): void }[] = [];
    try {
      await h.client.create(nsPath(ns, 'deployments'), deployment('roll', { replicas: 4, revisionHistoryLimit: 2, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } } }));
      await waitRolledOut(ns, 'roll');
      // From here on: never more than 4+1 replicas asked for, never fewer than 4-1 ready pods.
      watchers.push(
        watchAll<ReplicaSet>(h.client, nsPath(ns, 'replicasets'), (all) => {
          const total = all.reduce((n, rs) => n + (rs.spec?.replicas ?? 0), 0);
          if (total > 5) violations.push(`replicas asked for: ${total}`);
        }),
        watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
          const ready = all.filter((p) => isReady(p) && !p.metadata.deletionTimestamp).length;
          if (ready < 3) violations.push(`ready pods: ${ready}`);
        }),
      );
      await eventually(async () => (await pods(h.client, ns)).filter(isReady).length === 4, 5000, 'watchers see 4 ready pods');

      await setImage(ns, 'roll', 'nginx:1.28');
      const d2 = await waitRolledOut(ns, 'roll');
      assert.deepEqual(violations, []);
      assert.equal(d2.metadata.annotations?.[REVISION], '2');
      let rss = await replicaSets(ns);
      assert.equal(rss.length, 2);
      const rev = (rs: ReplicaSet) => rs.metadata.annotations?.[REVISION];
      const rs1 = rss.find((rs) => rev(rs) === '1')!;
      const rs2 = rss.find((rs) => rev(rs) === '2')!;
      assert.equal(rs1.spec?.replicas, 0, 'the old ReplicaSet is kept, scaled to zero');
      assert.equal(rs2.spec?.replicas, 4);
      assert.ok((await pods(h.client, ns)).every((p) => p.metadata.labels?.['pod-template-hash'] === rs2.metadata.labels?.['pod-template-hash']));

      // kubectl rollout undo: the client copies revision 1's template (minus the hash label) back.
      const template = structuredClone(rs1.spec!.template!);
      delete template.metadata!.labels!['pod-template-hash'];
      const annotations = { ...(rs1.metadata.annotations ?? {}) };
      for (const k of [REVISION, 'deployment.kubernetes.io/revision-history', 'deployment.kubernetes.io/desired-replicas', 'deployment.kubernetes.io/max-replicas']) delete annotations[k];
      await h.client.patch(
        nsPath(ns, 'deployments', 'roll'),
        [
          { op: 'replace', path: '/spec/template', value: template },
          { op: 'replace', path: '/metadata/annotations', value: { ...annotations, [REVISION]: d2.metadata.annotations![REVISION]! } },
        ],
        'json',
      );
      const d3 = await waitRolledOut(ns, 'roll');
      assert.deepEqual(violations, []);
      await eventually(async () => (await getD(ns, 'roll')).metadata.annotations?.[REVISION] === '3', 5000, 'deployment at revision 3');
      rss = await replicaSets(ns);
      assert.equal(rss.length, 2, 'undo reuses the old ReplicaSet');
      const back = rss.find((rs) => rs.metadata.uid === rs1.metadata.uid)!;
      assert.equal(rev(back), '3');
      assert.equal(back.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1');
      assert.equal(back.spec?.replicas, 4);
      assert.equal(rss.find((rs) => rs.metadata.uid === rs2.metadata.uid)!.spec?.replicas, 0);
      assert.equal(d3.spec?.template?.spec?.containers[0]?.image, 'nginx:1.27');

      // kubectl rollout restart: only a template annotation changes, which is a new revision.
      await h.client.patch(
        nsPath(ns, 'deployments', 'roll'),
        { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString() } } } } },
        'strategic',
      );
      await waitRolledOut(ns, 'roll');
      await eventually(async () => (await getD(ns, 'roll')).metadata.annotations?.[REVISION] === '4', 5000, 'revision 4');
      assert.equal((await replicaSets(ns)).length, 3, 'two old revisions kept (revisionHistoryLimit 2)');

      // One more: the oldest revision (2) falls out of the history.
      await setImage(ns, 'roll', 'nginx:1.29');
      await waitRolledOut(ns, 'roll');
      await eventually(async () => {
        const revs = (await replicaSets(ns)).map(rev).sort();
        return JSON.stringify(revs) === JSON.stringify(['3', '4', '5']) && revs;
      }, 5000, 'revision 2 cleaned up');
      assert.deepEqual(violations, []);
    } finally {
      for (const w of watchers) w.stop();
      running.stop();
      kubelet.stop();
    }
  });

  it('Recreate removes every old pod before the new ReplicaSet exists', async () => {
    const ns = await h.namespace('dep-recreate');
    // Pods are bound, so deletion is graceful: they stay Terminating until "the kubelet" finishes.
    const kubelet = simulateKubelet(h.client, ns, { finishDeletes: false });
    const running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    const overlaps: string[] = [];
    const watcher = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
      const hashes = new Set(all.map((p) => p.metadata.labels?.['pod-template-hash']));
      if (hashes.size > 1) overlaps.push([...hashes].join(','));
    });
    try {
      await h.client.create(nsPath(ns, 'deployments'), deployment('rc', { replicas: 2, strategy: { type: 'Recreate' } }));
      await waitRolledOut(ns, 'rc');
      for (const p of await pods(h.client, ns)) {
        await h.client.create(`${nsPath(ns, 'pods', p.metadata.name!, 'v1')}/binding`, {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name: p.metadata.name },
          target: { apiVersion: 'v1', kind: 'Node', name: 'node-a' },
        });
      }
      await setImage(ns, 'rc', 'nginx:1.28');
      // Old pods terminating, the deployment has seen it, and still no new ReplicaSet.
      await eventually(async () => {
        const ps = await pods(h.client, ns);
        const d = await getD(ns, 'rc');
        return ps.length === 2 && ps.every((p) => p.metadata.deletionTimestamp) && (d.status?.replicas ?? 0) === 0 && d.status?.observedGeneration === d.metadata.generation;
      }, 5000, 'old pods terminating');
      assert.equal((await replicaSets(ns)).length, 1, 'no new ReplicaSet while old pods remain');
      kubelet.stop();
      const finisher = simulateKubelet(h.client, ns);
      try {
        const d = await waitRolledOut(ns, 'rc');
        assert.equal(d.metadata.annotations?.[REVISION], '2');
        assert.equal((await replicaSets(ns)).length, 2);
        assert.deepEqual(overlaps, [], 'old and new pods never coexisted');
      } finally {
        finisher.stop();
      }
    } finally {
      watcher.stop();
      running.stop();
      kubelet.stop();
    }
  });

  it('does not roll out while paused, still scales, and rolls out once resumed', async () => {
    const ns = await h.namespace('dep-pause');
    const kubelet = simulateKubelet(h.client, ns);
    const running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    try {
      await h.client.create(nsPath(ns, 'deployments'), deployment('pz', { replicas: 2 }));
      await waitRolledOut(ns, 'pz');
      await h.client.patch(nsPath(ns, 'deployments', 'pz'), { spec: { paused: true } }, 'merge');
      await setImage(ns, 'pz', 'nginx:1.28');
      await h.client.patch(nsPath(ns, 'deployments', 'pz/scale'), { spec: { replicas: 3 } }, 'merge');
      await eventually(async () => {
        const d = await getD(ns, 'pz');
        const progressing = d.status?.conditions?.find((c) => c.type === 'Progressing');
        return d.status?.observedGeneration === d.metadata.generation && progressing?.status === 'Unknown' && progressing.reason === 'DeploymentPaused' && d.status?.availableReplicas === 3;
      }, 5000, 'paused, observed, scaled');
      const rss = await replicaSets(ns);
      assert.equal(rss.length, 1, 'no rollout while paused');
      assert.equal(rss[0]!.spec?.replicas, 3);
      assert.equal(rss[0]!.spec?.template?.spec?.containers[0]?.image, 'nginx:1.27');

      await h.client.patch(nsPath(ns, 'deployments', 'pz'), { spec: { paused: false } }, 'merge');
      const d = await waitRolledOut(ns, 'pz');
      assert.equal(d.metadata.annotations?.[REVISION], '2');
      assert.ok((await pods(h.client, ns)).every((p) => p.spec?.containers[0]?.image === 'nginx:1.28'));
    } finally {
      running.stop();
      kubelet.stop();
    }
  });

  it('reports ProgressDeadlineExceeded when new pods never become ready', async () => {
    const ns = await h.namespace('dep-deadline');
    const kubelet = simulateKubelet(h.client, ns, { ready: (p) => p.spec?.containers[0]?.image !== 'broken:1' });
    const running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    try {
      await h.client.create(nsPath(ns, 'deployments'), deployment('slow', { replicas: 2, progressDeadlineSeconds: 1 }));
      await waitRolledOut(ns, 'slow');
      await setImage(ns, 'slow', 'broken:1');
      const d = await eventually(async () => {
        const d = await getD(ns, 'slow');
        const c = d.status?.conditions?.find((x) => x.type === 'Progressing');
        return c?.status === 'False' && c.reason === 'ProgressDeadlineExceeded' && d;
      }, 8000, 'ProgressDeadlineExceeded');
      assert.throws(() => rolledOut(d), /exceeded its progress deadline/);
      assert.match(d.status!.conditions!.find((x) => x.type === 'Progressing')!.message!, /^ReplicaSet "slow-[a-z0-9]+" has timed out progressing\.$/);
      assert.equal(d.status?.availableReplicas, 2, 'maxUnavailable 25% of 2 rounds down to 0: both old pods stay');
    } finally {
      running.stop();
      kubelet.stop();
    }
  });

  it('finishes a rollout after the controllers restart mid-way', async () => {
    const ns = await h.namespace('dep-restart');
    let allowReady = true;
    const kubelet = simulateKubelet(h.client, ns, { ready: () => allowReady });
    let running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
    try {
      await h.client.create(nsPath(ns, 'deployments'), deployment('mid', { replicas: 4, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }));
      await waitRolledOut(ns, 'mid');
      allowReady = false;
      await setImage(ns, 'mid', 'nginx:1.28');
      const stalled = await eventually(async () => {
        const rss = await replicaSets(ns);
        const fresh = rss.find((rs) => rs.metadata.annotations?.[REVISION] === '2');
        return fresh && (fresh.status?.replicas ?? 0) >= 1 && rss.length === 2 && fresh;
      }, 5000, 'rollout under way');
      running.stop();

      // While no controller runs, the new pods come up.
      allowReady = true;
      for (const p of await pods(h.client, ns)) if (!isReady(p)) await markReady(h.client, p);
      running = startControllers(h.client, [new ReplicaSetController(), new DeploymentController()]);
      const d = await waitRolledOut(ns, 'mid');
      assert.equal(d.metadata.annotations?.[REVISION], '2');
      const rss = await replicaSets(ns);
      assert.equal(rss.length, 2, 'the fresh controller found its ReplicaSet instead of making another');
      assert.equal(rss.find((rs) => rs.metadata.uid === stalled.metadata.uid)?.spec?.replicas, 4);
    } finally {
      running.stop();
      kubelet.stop();
    }
  });
});

describe('rollout arithmetic', () => {
  const rs = (name: string, replicas: number, created: string, maxReplicas?: number): ReplicaSet => ({
    metadata: { name, creationTimestamp: created, ...(maxReplicas !== undefined ? { annotations: { 'deployment.kubernetes.io/max-replicas': String(maxReplicas) } } : {}) },
    spec: { replicas },
  });
  const d = (replicas: number, maxSurge: number | string, maxUnavailable: number | string): Deployment => ({
    metadata: { name: 'x', generation: 1 },
    spec: { replicas, strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } } },
  });

  it('resolves surge up and unavailability down, never both zero', () => {
    assert.deepEqual(resolveFenceposts(d(10, '25%', '25%')), { surge: 3, unavailable: 2 });
    assert.deepEqual(resolveFenceposts(d(1, '25%', '25%')), { surge: 1, unavailable: 0 });
    assert.deepEqual(resolveFenceposts(d(3, 0, '10%')), { surge: 0, unavailable: 1 });
  });

  it('grows the new ReplicaSet only within the surge budget', () => {
    const dep = d(4, 1, 1);
    const oldRS = rs('old', 4, '2026-01-01T00:00:00Z');
    const newRS = rs('new', 0, '2026-01-01T00:01:00Z');
    assert.equal(newRSNewReplicas(dep, [oldRS, newRS], newRS), 1);
    oldRS.spec!.replicas = 3;
    newRS.spec!.replicas = 1;
    assert.equal(newRSNewReplicas(dep, [oldRS, newRS], newRS), 2);
  });

  it('spreads a mid-rollout resize proportionally (10 -> 15 with maxSurge 3)', () => {
    const oldRS = rs('old', 8, '2026-01-01T00:00:00Z', 13);
    const newRS = rs('new', 5, '2026-01-01T00:01:00Z', 13);
    const sizes = proportionalSizes(d(15, 3, 2), newRS, [oldRS]);
    assert.equal(sizes.get(oldRS), 11);
    assert.equal(sizes.get(newRS), 7);
  });
});
