// Deployment controller (upstream pkg/controller/deployment): owns one ReplicaSet per pod template
// (named <deployment>-<pod-template-hash>), rolls from old to new with RollingUpdate
// (maxSurge/maxUnavailable) or Recreate, numbers revisions for `kubectl rollout history|undo`,
// trims old ReplicaSets to revisionHistoryLimit, honours paused and progressDeadlineSeconds, and
// keeps the status `kubectl rollout status` waits on.
//
// Every write is guarded by the resourceVersion the decision was based on, so acting on a stale
// cache fails with a conflict and is simply retried when the cache catches up.
import { errorText } from '../util/error-text.js';
import { isStatusError } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';
import { deepClone, semanticEqual } from '../api/kinds/json.js';
import type { Deployment, DeploymentStatus } from '../api/kinds/deployment.js';
import type { Pod } from '../api/kinds/pod.js';
import { type ReplicaSet, workloadSelector } from '../api/kinds/replicaset.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { allowManyRequests, claimObjects, conflictsRequeue, controllerOf, controllerRefTo, isControlledBy, objectPath, OwnerIndex, ownerStillThere, templateHash } from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import {
  activeOnly,
  calculateStatus,
  countableAvailable,
  deploymentComplete,
  deploymentProgressing,
  deploymentTimedOut,
  desiredReplicas,
  findActiveOrLatest,
  getCondition,
  hasProgressDeadline,
  isRollingUpdate,
  isSaturated,
  maxSurge,
  maxUnavailable,
  newCondition,
  newRSNewReplicas,
  progressDeadlineLeft,
  proportionalSizes,
  REASON,
  removeCondition,
  replicasOf,
  setCondition,
  specReplicas,
  statusReplicas,
} from './deployment-rollout.js';
import {
  annotatedNumber,
  byCreation,
  DESIRED_REPLICAS_ANNOTATION,
  equalIgnoreHash,
  findNewReplicaSet,
  maxRevision,
  POD_TEMPLATE_HASH_LABEL,
  REVISION_ANNOTATION,
  replicaSetTemplate,
  replicasAnnotationsNeedUpdate,
  revisionOf,
  setDeploymentRevision,
  setNewReplicaSetAnnotations,
  setReplicasAnnotations,
} from './revisions.js';

const APPS = '/apis/apps/v1';

export class DeploymentController implements Controller {
  readonly name = 'deployment';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    allowManyRequests(signal);
    const deployments = ctx.informers.for<Deployment>(PATHS.deployments);
    const replicaSets = ctx.informers.for<ReplicaSet>(PATHS.replicasets);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const rsIndex = new OwnerIndex(replicaSets);
    const podIndex = new OwnerIndex(pods);
    const loop = new ReconcileLoop(new DeploymentReconciler(ctx, deployments, rsIndex, podIndex), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (d: Deployment) => loop.enqueue(objectKeyOf(d));

    deployments.addHandlers({ add: enqueue, update: (_o, n) => enqueue(n), delete: enqueue });

    const ownerOf = (rs: ReplicaSet): Deployment | undefined => {
      const ref = controllerOf(rs);
      if (ref?.kind !== 'Deployment') return undefined;
      const d = deployments.get(`${rs.metadata.namespace}/${ref.name}`);
      return d?.metadata.uid === ref.uid ? d : undefined;
    };
    // An orphan ReplicaSet wakes every Deployment that could adopt it.
    const enqueueMatching = (rs: ReplicaSet) => {
      for (const d of deployments.list()) {
        if (d.metadata.namespace !== rs.metadata.namespace) continue;
        if (workloadSelector(d.spec?.selector)?.matches(rs.metadata.labels)) enqueue(d);
      }
    };
    const rsChanged = (rs: ReplicaSet) => {
      const d = ownerOf(rs);
      if (d) enqueue(d);
      else if (!controllerOf(rs)) enqueueMatching(rs);
    };
    replicaSets.addHandlers({
      add: rsChanged,
      update: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (controllerOf(old)?.uid !== controllerOf(cur)?.uid) {
          const prev = ownerOf(old);
          if (prev) enqueue(prev);
        }
        rsChanged(cur);
      },
      delete: (rs) => {
        const d = ownerOf(rs);
        if (d) enqueue(d);
      },
    });
    // Recreate waits for the old pods to be gone, which only a pod deletion tells.
    pods.addHandlers({
      delete: (pod) => {
        const ref = controllerOf(pod);
        if (ref?.kind !== 'ReplicaSet') return;
        const rs = replicaSets.get(`${pod.metadata.namespace}/${ref.name}`);
        const d = rs && ownerOf(rs);
        if (d && !isRollingUpdate(d)) enqueue(d);
      },
    });

    void Promise.all([deployments.waitForSync(), replicaSets.waitForSync(), pods.waitForSync()]).then(() => loop.run(signal));
  }
}

/** One reconcile's working state: the Deployment as last written or read, and what we persisted of it. */
interface Run {
  d: Deployment;
  persistedRevision: string | undefined;
  signal: AbortSignal;
}

interface RSGroups {
  newRS: ReplicaSet | undefined;
  oldRSs: ReplicaSet[];
}

class DeploymentReconciler implements Reconciler {
  readonly name = 'deployment';
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly deployments: Informer<Deployment>,
    private readonly rsIndex: OwnerIndex<ReplicaSet>,
    private readonly podIndex: OwnerIndex<Pod>,
  ) {
    this.recorder = ctx.recorder('deployment-controller');
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const cached = this.deployments.get(key);
    if (!cached) return;
    const run: Run = { d: deepClone(cached), persistedRevision: cached.metadata.annotations?.[REVISION_ANNOTATION], signal };
    const d = run.d;
    const selector = workloadSelector(d.spec?.selector);
    if (!selector || selector.isEmpty()) {
      this.recorder.event(d, 'Warning', 'SelectingAll', 'This deployment is selecting all pods. A non-empty selector is required.');
      if ((d.status?.observedGeneration ?? 0) < (d.metadata.generation ?? 0)) {
        d.status = { ...(d.status ?? {}), observedGeneration: d.metadata.generation ?? 0 };
        await this.writeDeployment(run);
      }
      return;
    }
    const rsList = await this.claimReplicaSets(run, selector);
    if (d.metadata.deletionTimestamp) return this.syncStatusOnly(run, rsList);
    await this.checkPausedConditions(run);
    if (run.d.spec?.paused) return this.syncScale(run, rsList);
    if (await this.isScalingEvent(run, rsList)) return this.syncScale(run, rsList);
    return isRollingUpdate(run.d) ? this.rolloutRolling(run, rsList) : this.rolloutRecreate(run, rsList);
  }

  // ---- ReplicaSets of a Deployment ---------------------------------------------------------

  private async claimReplicaSets(run: Run, selector: NonNullable<ReturnType<typeof workloadSelector>>): Promise<ReplicaSet[]> {
    const d = run.d;
    const ns = d.metadata.namespace!;
    const candidates = [...this.rsIndex.owned(d.metadata.uid), ...this.rsIndex.orphansIn(ns)];
    const res = await claimObjects<ReplicaSet>({
      client: this.ctx.client,
      owner: d,
      ownerRef: controllerRefTo(d, 'apps/v1', 'Deployment'),
      selector,
      prefix: APPS,
      resource: 'replicasets',
      candidates,
      canAdopt: () => ownerStillThere(this.ctx.client, this.path(d), d, run.signal),
      log: this.ctx.log,
      signal: run.signal,
    });
    if (res.errors.length > 0) throw res.errors[0];
    // Private copies: scaling updates them in place so later steps see what was written.
    return res.claimed.map((rs) => deepClone(rs));
  }

  /** Splits into the new ReplicaSet (creating it if asked) and the old ones, syncing revisions (upstream getAllReplicaSetsAndSyncRevision). */
  private async groups(run: Run, rsList: ReplicaSet[], create: boolean): Promise<RSGroups> {
    const existing = findNewReplicaSet(run.d, rsList);
    const oldRSs = rsList.filter((rs) => rs !== existing);
    const newRS = await this.getNewReplicaSet(run, oldRSs, existing, create);
    return { newRS, oldRSs };
  }

  private async getNewReplicaSet(run: Run, oldRSs: ReplicaSet[], existing: ReplicaSet | undefined, create: boolean): Promise<ReplicaSet | undefined> {
    const newRevision = maxRevision(oldRSs) + 1;
    if (existing) {
      const copy = deepClone(existing);
      const annotationsChanged = setNewReplicaSetAnnotations(run.d, copy, newRevision, true, desiredReplicas(run.d) + maxSurge(run.d));
      const minReady = run.d.spec?.minReadySeconds ?? 0;
      if (annotationsChanged || (copy.spec?.minReadySeconds ?? 0) !== minReady) {
        copy.spec = { ...(copy.spec ?? {}), minReadySeconds: minReady };
        if (revisionOf(copy) > revisionOf(existing) && revisionOf(existing) > 0) {
          this.ctx.log.info({ deployment: objectKeyOf(run.d), replicaset: copy.metadata.name, revision: revisionOf(copy) }, 'an earlier template is current again');
        }
        replaceInPlace(existing, await this.ctx.client.replace<ReplicaSet>(this.rsPath(copy), copy, { signal: run.signal }));
        return existing;
      }
      let needsUpdate = setDeploymentRevision(run.d, copy.metadata.annotations?.[REVISION_ANNOTATION] ?? String(newRevision));
      if (hasProgressDeadline(run.d) && !getCondition(run.d.status, 'Progressing')) {
        const status = (run.d.status ??= {});
        setCondition(status, newCondition('Progressing', 'True', REASON.foundNewRS, `Found new replica set "${existing.metadata.name}"`, this.ctx.clock.now()));
        needsUpdate = true;
      }
      if (needsUpdate) await this.writeDeployment(run);
      return existing;
    }
    if (!create) return undefined;

    const d = run.d;
    const hash = templateHash(d.spec?.template, d.status?.collisionCount);
    const selector = deepClone(d.spec?.selector ?? {});
    selector.matchLabels = { ...(selector.matchLabels ?? {}), [POD_TEMPLATE_HASH_LABEL]: hash };
    const template = replicaSetTemplate(d, hash);
    const rs: ReplicaSet = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: `${d.metadata.name}-${hash}`,
        namespace: d.metadata.namespace!,
        ownerReferences: [controllerRefTo(d, 'apps/v1', 'Deployment')],
        labels: { ...(template.metadata?.labels ?? {}) },
      },
      spec: { replicas: 0, minReadySeconds: d.spec?.minReadySeconds ?? 0, selector, template },
    };
    rs.spec!.replicas = newRSNewReplicas(d, [...oldRSs, rs], rs);
    setNewReplicaSetAnnotations(d, rs, newRevision, false, desiredReplicas(d) + maxSurge(d));

    let created: ReplicaSet;
    let alreadyExisted = false;
    try {
      created = await this.ctx.client.create<ReplicaSet>(objectPath(APPS, 'replicasets', d.metadata.namespace!), rs, { signal: run.signal });
    } catch (e) {
      if (isStatusError(e, 'AlreadyExists')) {
        // Either ours from an earlier sync the cache has not shown yet, or a true hash collision.
        const found = await this.ctx.client.get<ReplicaSet>(this.rsPath(rs), { signal: run.signal });
        if (isControlledBy(found, d) && equalIgnoreHash(found.spec?.template, d.spec?.template)) {
          created = found;
          alreadyExisted = true;
        } else {
          const status = (d.status ??= {});
          status.collisionCount = (status.collisionCount ?? 0) + 1;
          this.ctx.log.info({ deployment: objectKeyOf(d), collisionCount: status.collisionCount }, 'pod-template-hash collision; bumping collisionCount');
          await this.writeDeployment(run);
          throw e;
        }
      } else {
        const msg = `Failed to create new replica set "${rs.metadata.name}": ${errorText(e)}`;
        if (hasProgressDeadline(d) && !run.signal.aborted) {
          setCondition((d.status ??= {}), newCondition('Progressing', 'False', REASON.rsCreateError, msg, this.ctx.clock.now()));
          await this.writeDeployment(run).catch(() => {});
        }
        this.recorder.event(d, 'Warning', 'FailedCreate', msg);
        throw e;
      }
    }
    if (!alreadyExisted && replicasOf(created) > 0) {
      this.recorder.event(d, 'Normal', 'ScalingReplicaSet', `Scaled up replica set ${created.metadata.name} from 0 to ${replicasOf(created)}`);
    }
    let needsUpdate = setDeploymentRevision(d, String(newRevision));
    if (!alreadyExisted && hasProgressDeadline(d)) {
      setCondition((d.status ??= {}), newCondition('Progressing', 'True', REASON.newRSCreated, `Created new replica set "${created.metadata.name}"`, this.ctx.clock.now()));
      needsUpdate = true;
    }
    if (needsUpdate) await this.writeDeployment(run);
    return created;
  }

  // ---- strategies --------------------------------------------------------------------------

  private async rolloutRolling(run: Run, rsList: ReplicaSet[]): Promise<ReconcileResult | void> {
    const { newRS, oldRSs } = await this.groups(run, rsList, true);
    const rs = newRS!;
    const all = [...oldRSs, rs];
    if (await this.reconcileNewReplicaSet(run, all, rs)) return this.syncRolloutStatus(run, all, rs);
    if (await this.reconcileOldReplicaSets(run, all, activeOnly(oldRSs), rs)) return this.syncRolloutStatus(run, all, rs);
    if (deploymentComplete(run.d, run.d.status ?? {})) await this.cleanupDeployment(run, oldRSs);
    return this.syncRolloutStatus(run, all, rs);
  }

  private async reconcileNewReplicaSet(run: Run, all: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
    const want = desiredReplicas(run.d);
    if (replicasOf(newRS) === want) return false;
    if (replicasOf(newRS) > want) return this.scaleAndRecord(run, newRS, want);
    return this.scaleAndRecord(run, newRS, newRSNewReplicas(run.d, all, newRS));
  }

  private async reconcileOldReplicaSets(run: Run, all: ReplicaSet[], oldActive: ReplicaSet[], newRS: ReplicaSet): Promise<boolean> {
    if (specReplicas(oldActive) === 0) return false;
    const minAvailable = desiredReplicas(run.d) - maxUnavailable(run.d);
    const newUnavailable = replicasOf(newRS) - countableAvailable([newRS]);
    const maxScaledDown = specReplicas(all) - minAvailable - newUnavailable;
    if (maxScaledDown <= 0) return false;
    // Unhealthy old replicas go first: they cost no availability and may be what blocks the rollout.
    const cleaned = await this.cleanupUnhealthyReplicas(run, oldActive, maxScaledDown);
    const scaled = await this.scaleDownOldForRollingUpdate(run, [...oldActive, newRS], oldActive);
    return cleaned + scaled > 0;
  }

  private async cleanupUnhealthyReplicas(run: Run, oldRSs: ReplicaSet[], maxCleanup: number): Promise<number> {
    let total = 0;
    for (const rs of [...oldRSs].sort(byCreation)) {
      if (total >= maxCleanup) break;
      const available = rs.status?.availableReplicas ?? 0;
      if (replicasOf(rs) === 0 || replicasOf(rs) <= available) continue;
      const down = Math.min(maxCleanup - total, replicasOf(rs) - available);
      await this.scaleAndRecord(run, rs, replicasOf(rs) - down);
      total += down;
    }
    return total;
  }

  private async scaleDownOldForRollingUpdate(run: Run, all: ReplicaSet[], oldRSs: ReplicaSet[]): Promise<number> {
    const minAvailable = desiredReplicas(run.d) - maxUnavailable(run.d);
    const available = countableAvailable(all);
    if (available <= minAvailable) return 0;
    const budget = available - minAvailable;
    let total = 0;
    for (const rs of [...oldRSs].sort(byCreation)) {
      if (total >= budget) break;
      if (replicasOf(rs) === 0) continue;
      const down = Math.min(replicasOf(rs), budget - total);
      await this.scaleAndRecord(run, rs, replicasOf(rs) - down);
      total += down;
    }
    return total;
  }

  private async rolloutRecreate(run: Run, rsList: ReplicaSet[]): Promise<ReconcileResult | void> {
    // No new ReplicaSet yet: it must not exist (let alone scale up) while old pods run.
    let { newRS, oldRSs } = await this.groups(run, rsList, false);
    let all: (ReplicaSet | undefined)[] = [...oldRSs, newRS];
    let scaledDown = false;
    for (const rs of activeOnly(oldRSs)) if (await this.scaleAndRecord(run, rs, 0)) scaledDown = true;
    if (scaledDown) return this.syncRolloutStatus(run, all, newRS);
    if (this.oldPodsRunning(newRS, oldRSs)) return this.syncRolloutStatus(run, all, newRS);
    if (!newRS) {
      ({ newRS, oldRSs } = await this.groups(run, rsList, true));
      all = [...oldRSs, newRS];
    }
    await this.scaleAndRecord(run, newRS!, desiredReplicas(run.d));
    if (deploymentComplete(run.d, run.d.status ?? {})) await this.cleanupDeployment(run, oldRSs);
    return this.syncRolloutStatus(run, all, newRS);
  }

  /** Any pod of an old ReplicaSet not yet finished, including ones still terminating (upstream oldPodsRunning). */
  private oldPodsRunning(newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): boolean {
    if (statusReplicas(oldRSs) > 0) return true;
    for (const rs of oldRSs) {
      if (rs.metadata.uid === newRS?.metadata.uid) continue;
      for (const pod of this.podIndex.owned(rs.metadata.uid)) {
        const phase = pod.status?.phase;
        if (phase !== 'Failed' && phase !== 'Succeeded') return true;
      }
    }
    return false;
  }

  // ---- scaling without a rollout (paused, or spec.replicas changed) -------------------------

  private async isScalingEvent(run: Run, rsList: ReplicaSet[]): Promise<boolean> {
    const { newRS, oldRSs } = await this.groups(run, rsList, false);
    for (const rs of activeOnly([...oldRSs, newRS])) {
      const desired = annotatedNumber(rs, DESIRED_REPLICAS_ANNOTATION);
      if (desired !== undefined && desired !== desiredReplicas(run.d)) return true;
    }
    return false;
  }

  private async syncScale(run: Run, rsList: ReplicaSet[]): Promise<ReconcileResult | void> {
    const { newRS, oldRSs } = await this.groups(run, rsList, false);
    await this.scale(run, newRS, oldRSs);
    if (run.d.spec?.paused) await this.cleanupDeployment(run, oldRSs);
    return this.syncDeploymentStatus(run, [...oldRSs, newRS], newRS);
  }

  private async scale(run: Run, newRS: ReplicaSet | undefined, oldRSs: ReplicaSet[]): Promise<void> {
    const d = run.d;
    const only = findActiveOrLatest(newRS, oldRSs);
    if (only) {
      if (replicasOf(only) !== desiredReplicas(d)) await this.scaleAndRecord(run, only, desiredReplicas(d));
      return;
    }
    if (isSaturated(d, newRS)) {
      for (const rs of activeOnly(oldRSs)) await this.scaleAndRecord(run, rs, 0);
      return;
    }
    if (!isRollingUpdate(d)) return;
    for (const [rs, size] of proportionalSizes(d, newRS, oldRSs)) {
      await this.scaleReplicaSet(run, rs, size, size > replicasOf(rs) ? 'up' : 'down');
    }
  }

  private scaleAndRecord(run: Run, rs: ReplicaSet, size: number): Promise<boolean> {
    if (replicasOf(rs) === size) return Promise.resolve(false);
    return this.scaleReplicaSet(run, rs, size, replicasOf(rs) < size ? 'up' : 'down');
  }

  /** Writes spec.replicas and the replicas annotations; true when the size changed. */
  private async scaleReplicaSet(run: Run, rs: ReplicaSet, size: number, direction: 'up' | 'down'): Promise<boolean> {
    const desired = desiredReplicas(run.d);
    const max = desired + maxSurge(run.d);
    const sizeChanges = replicasOf(rs) !== size;
    if (!sizeChanges && !replicasAnnotationsNeedUpdate(rs, desired, max)) return false;
    const from = replicasOf(rs);
    const copy = deepClone(rs);
    copy.spec = { ...(copy.spec ?? {}), replicas: size };
    setReplicasAnnotations(copy, desired, max);
    replaceInPlace(rs, await this.ctx.client.replace<ReplicaSet>(this.rsPath(copy), copy, { signal: run.signal }));
    if (!sizeChanges) return false;
    this.recorder.event(run.d, 'Normal', 'ScalingReplicaSet', `Scaled ${direction} replica set ${rs.metadata.name} from ${from} to ${size}`);
    return true;
  }

  // ---- history, pause, status ----------------------------------------------------------------

  /** Deletes the oldest fully scaled-down ReplicaSets beyond revisionHistoryLimit. */
  private async cleanupDeployment(run: Run, oldRSs: ReplicaSet[]): Promise<void> {
    const limit = run.d.spec?.revisionHistoryLimit;
    if (limit === undefined || limit === null) return;
    const cleanable = oldRSs.filter((rs) => !rs.metadata.deletionTimestamp);
    const excess = cleanable.length - limit;
    if (excess <= 0) return;
    cleanable.sort((a, b) => revisionOf(a) - revisionOf(b) || byCreation(a, b));
    for (const rs of cleanable.slice(0, excess)) {
      if ((rs.status?.replicas ?? 0) !== 0 || replicasOf(rs) !== 0 || (rs.metadata.generation ?? 0) > (rs.status?.observedGeneration ?? 0)) continue;
      try {
        await this.ctx.client.delete(this.rsPath(rs), undefined, { signal: run.signal });
        this.ctx.log.info({ deployment: objectKeyOf(run.d), replicaset: rs.metadata.name, revision: revisionOf(rs) }, 'deleted an old replica set beyond revisionHistoryLimit');
      } catch (e) {
        if (!isStatusError(e, 'NotFound')) throw e;
      }
    }
  }

  private async checkPausedConditions(run: Run): Promise<void> {
    const d = run.d;
    if (!hasProgressDeadline(d)) return;
    const cond = getCondition(d.status, 'Progressing');
    // A reported lack of progress stays visible; pausing does not hide it.
    if (cond?.reason === REASON.timedOut) return;
    const pausedShown = cond?.reason === REASON.paused;
    const now = this.ctx.clock.now();
    if (d.spec?.paused && !pausedShown) {
      setCondition((d.status ??= {}), newCondition('Progressing', 'Unknown', REASON.paused, 'Deployment is paused', now));
    } else if (!d.spec?.paused && pausedShown) {
      setCondition((d.status ??= {}), newCondition('Progressing', 'Unknown', REASON.resumed, 'Deployment is resumed', now));
    } else {
      return;
    }
    await this.writeDeployment(run);
  }

  private async syncStatusOnly(run: Run, rsList: ReplicaSet[]): Promise<ReconcileResult | void> {
    const { newRS, oldRSs } = await this.groups(run, rsList, false);
    return this.syncDeploymentStatus(run, [...oldRSs, newRS], newRS);
  }

  private async syncDeploymentStatus(run: Run, all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<void> {
    const status = calculateStatus(run.d, all, newRS, this.ctx.clock.now());
    if (semanticEqual(run.d.status, status)) return;
    run.d.status = status;
    await this.writeDeployment(run);
  }

  /** Upstream syncRolloutStatus: status plus the Progressing condition that the progress deadline is judged by. */
  private async syncRolloutStatus(run: Run, all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined): Promise<ReconcileResult | void> {
    const d = run.d;
    const now = this.ctx.clock.now();
    const status = calculateStatus(d, all, newRS, now);
    if (!hasProgressDeadline(d)) removeCondition(status, 'Progressing');
    const current = getCondition(d.status, 'Progressing');
    const complete = status.replicas === status.updatedReplicas && current?.reason === REASON.newRSAvailable;
    if (hasProgressDeadline(d) && !complete) {
      const subject = newRS ? `ReplicaSet "${newRS.metadata.name}"` : `Deployment "${d.metadata.name}"`;
      if (deploymentComplete(d, status)) {
        setCondition(status, newCondition('Progressing', 'True', REASON.newRSAvailable, `${subject} has successfully progressed.`, now));
      } else if (deploymentProgressing(d, status)) {
        // Progress refreshes lastUpdateTime even with an unchanged reason: that is what the deadline counts from.
        const c = newCondition('Progressing', 'True', REASON.rsUpdated, `${subject} is progressing.`, now);
        if (current?.status === 'True') c.lastTransitionTime = current.lastTransitionTime;
        removeCondition(status, 'Progressing');
        setCondition(status, c);
      } else if (deploymentTimedOut(d, status, now)) {
        const before = getCondition(status, 'Progressing');
        setCondition(status, newCondition('Progressing', 'False', REASON.timedOut, `${subject} has timed out progressing.`, now));
        if (before?.reason !== REASON.timedOut) this.ctx.log.info({ deployment: objectKeyOf(d) }, 'deployment exceeded its progress deadline');
      }
    }
    const failure = replicaFailure(all, newRS);
    if (failure) setCondition(status, { ...failure, lastUpdateTime: failure.lastTransitionTime });
    else removeCondition(status, 'ReplicaFailure');
    if (semanticEqual(d.status, status)) return this.requeueStuck(d, status, now);
    d.status = status;
    await this.writeDeployment(run);
  }

  /** Without progress there is no event to wake us: look again when the deadline would pass. */
  private requeueStuck(d: Deployment, status: DeploymentStatus, now: number): ReconcileResult | void {
    const current = getCondition(d.status, 'Progressing');
    if (!hasProgressDeadline(d) || !current || deploymentComplete(d, status) || current.reason === REASON.timedOut) return;
    const left = progressDeadlineLeft(d, d.status ?? {}, now);
    if (left === undefined) return;
    return { requeueAfterMs: Math.max(left, 0) + 100 };
  }

  /**
   * Persists the revision annotation (metadata) and the status, each guarded by the
   * resourceVersion we decided on. The status subresource ignores metadata, hence two writes.
   */
  private async writeDeployment(run: Run): Promise<void> {
    const path = this.path(run.d);
    const revision = run.d.metadata.annotations?.[REVISION_ANNOTATION];
    if (revision !== undefined && revision !== run.persistedRevision) {
      const patched = await this.ctx.client.patch<Deployment>(
        path,
        { metadata: { annotations: { [REVISION_ANNOTATION]: revision }, resourceVersion: run.d.metadata.resourceVersion } },
        'merge',
        { signal: run.signal },
      );
      run.d.metadata = patched.metadata;
      run.persistedRevision = revision;
    }
    const updated = await this.ctx.client.replace<Deployment>(`${path}/status`, run.d, { signal: run.signal });
    run.d = updated;
    run.persistedRevision = updated.metadata.annotations?.[REVISION_ANNOTATION];
  }

  private path(d: KubeObject): string {
    return objectPath(APPS, 'deployments', d.metadata.namespace!, d.metadata.name!);
  }

  private rsPath(rs: KubeObject): string {
    return objectPath(APPS, 'replicasets', rs.metadata.namespace!, rs.metadata.name!);
  }
}

/** A ReplicaFailure condition of the new (else any) ReplicaSet, surfaced on the Deployment. */
function replicaFailure(all: (ReplicaSet | undefined)[], newRS: ReplicaSet | undefined) {
  const pick = (rs: ReplicaSet | undefined) => (rs?.status?.conditions ?? []).find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  const c = pick(newRS) ?? all.map(pick).find((x) => !!x);
  if (!c) return undefined;
  return {
    type: 'ReplicaFailure',
    status: 'True' as const,
    reason: c.reason ?? '',
    message: c.message ?? '',
    ...(c.lastTransitionTime ? { lastTransitionTime: c.lastTransitionTime } : {}),
  };
}

/** Makes `target` the object the API returned, so every reference to it sees the write. */
function replaceInPlace<T extends KubeObject>(target: T, fresh: T): void {
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, fresh);
}
