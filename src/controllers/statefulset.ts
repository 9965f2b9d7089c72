// StatefulSet controller (upstream pkg/controller/statefulset): pods with stable names <set>-<ordinal>,
// hostname = the pod's name and subdomain = spec.serviceName, created in ordinal order and each only
// once its predecessors are Running and Ready (OrderedReady; Parallel creates and deletes them all at
// once); scale-down removes the highest ordinals first, one at a time; a failed pod is deleted and
// made again under the same name. Rolling updates replace pods from the highest ordinal down to
// spec.updateStrategy.rollingUpdate.partition, one at a time, each after the one before is healthy
// again; OnDelete leaves that to the user. Each template is a ControllerRevision
// (revision-history.ts): pods carry its name as `controller-revision-hash`, pods below the
// partition are made from the current revision, the others from the update revision, and status
// reports both (what `kubectl rollout status|history|undo statefulset` read).
import { errorText } from '../util/error-text.js';
import { isStatusError } from '../api/errors.js';
import { semanticEqual, isObject, obj } from '../api/kinds/json.js';
import { isPodReady, type Pod, type PodTemplateSpec } from '../api/kinds/pod.js';
import { workloadSelector } from '../api/kinds/replicaset.js';
import { withClaimVolumes, type StatefulSet, type StatefulSetStatus } from '../api/kinds/statefulset.js';
import type { ControllerRevision } from '../api/kinds/controllerrevision.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import {
  allowManyRequests,
  claimObjects,
  conflictsRequeue,
  controllerRefTo,
  Expectations,
  isNamespaceTerminating,
  isPodAvailable,
  objectPath,
  OwnerIndex,
  ownerStillThere,
  PodControl,
  watchOwnedPods,
} from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { CONTROLLER_REVISION_HASH_LABEL, RevisionHistory } from './revision-history.js';

export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** The ordinal in a member pod's name (<set>-<ordinal>), or undefined for a pod not named as one. */
export function ordinalOf(setName: string, pod: Pod): number | undefined {
  const name = pod.metadata.name ?? '';
  if (!name.startsWith(`${setName}-`)) return undefined;
  const rest = name.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

function isHealthy(pod: Pod): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase === 'Running' && isPodReady(pod);
}

function isFinished(pod: Pod): boolean {
  return pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';
}

function revisionName(pod: Pod): string {
  return pod.metadata.labels?.[CONTROLLER_REVISION_HASH_LABEL] ?? '';
}

/** The pod template a revision holds (its data is the patch {"spec":{"template":{"$patch":"replace",...}}}). */
function templateOf(rev: ControllerRevision): PodTemplateSpec {
  const { $patch: _p, ...template } = obj(obj(obj(rev.data).spec).template);
  return template as PodTemplateSpec;
}

export class StatefulSetController implements Controller {
  readonly name = 'statefulset';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    allowManyRequests(signal);
    const sets = ctx.informers.for<StatefulSet>(PATHS.statefulsets);
    const podInformer = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const revisions = ctx.informers.for<ControllerRevision>(PATHS.controllerrevisions);
    const reconciler = new StatefulSetReconciler(ctx, sets, new OwnerIndex(podInformer), new RevisionHistory(ctx, revisions, { kind: 'StatefulSet', resource: 'statefulsets' }));
    const loop = new ReconcileLoop(reconciler, { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (s: StatefulSet) => loop.enqueue(objectKeyOf(s));
    sets.addHandlers({ add: enqueue, update: (_o, n) => enqueue(n), delete: enqueue });
    watchOwnedPods({
      kind: 'StatefulSet',
      owners: sets,
      pods: podInformer,
      // Pod names are unique per ordinal, so a lagging cache cannot make a second pod: a create
      // of a name that exists fails. Nothing needs expecting.
      expectations: new Expectations(ctx.clock),
      enqueue,
      selector: (s) => workloadSelector(s.spec?.selector),
      ownedPodUpdated: (s, old, cur) => {
        const mrs = s.spec?.minReadySeconds ?? 0;
        if (mrs > 0 && !isPodReady(old) && isPodReady(cur)) loop.queue.addAfter(objectKeyOf(s), mrs * 1000 + 1);
      },
    });
    void Promise.all([sets.waitForSync(), podInformer.waitForSync(), revisions.waitForSync()]).then(() => loop.run(signal));
  }
}

class StatefulSetReconciler implements Reconciler {
  readonly name = 'statefulset';
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly sets: Informer<StatefulSet>,
    private readonly podIndex: OwnerIndex<Pod>,
    private readonly history: RevisionHistory,
  ) {
    this.recorder = ctx.recorder('statefulset-controller');
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private path(set: StatefulSet): string {
    return objectPath('/apis/apps/v1', 'statefulsets', set.metadata.namespace!, set.metadata.name!);
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const set = this.sets.get(key);
    if (!set || set.metadata.deletionTimestamp) return;
    const selector = workloadSelector(set.spec?.selector);
    if (!selector || selector.isEmpty()) return;
    const ns = set.metadata.namespace!;
    const canAdopt = () => ownerStillThere(this.ctx.client, this.path(set), set, signal);
    const claim = await claimObjects<Pod>({
      client: this.ctx.client,
      owner: set,
      ownerRef: controllerRefTo(set, 'apps/v1', 'StatefulSet'),
      selector,
      prefix: '/api/v1',
      resource: 'pods',
      candidates: [...this.podIndex.owned(set.metadata.uid), ...this.podIndex.orphansIn(ns)],
      // Only pods named as members are adopted (upstream isMemberOf).
      adoptable: (p) => ordinalOf(set.metadata.name!, p) !== undefined,
      canAdopt,
      log: this.ctx.log,
      signal,
    });
    if (claim.errors.length > 0) throw claim.errors[0];
    const pods = claim.claimed.filter((p) => ordinalOf(set.metadata.name!, p) !== undefined);

    const { current: update, old } = await this.history.construct(set, selector, canAdopt, signal);
    const current = old.find((r) => r.metadata.name === set.status?.currentRevision) ?? update;
    await this.manage(set, pods, current, update, signal);
    await this.writeStatus(set, pods, current, update, signal);
    await this.history.cleanup(set, old.filter((r) => r !== current), pods, signal);
  }

  /** One pass of creates, deletes and updates, stopping where OrderedReady must wait. */
  private async manage(set: StatefulSet, pods: Pod[], current: ControllerRevision, update: ControllerRevision, signal: AbortSignal): Promise<void> {
    const name = set.metadata.name!;
    const spec = set.spec ?? {};
    const start = spec.ordinals?.start ?? 0;
    const end = start + (spec.replicas ?? 1);
    const parallel = spec.podManagementPolicy === 'Parallel';
    const rolling = (spec.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    const partition = rolling ? (spec.updateStrategy?.rollingUpdate?.partition ?? 0) : 0;
    const members = new Map<number, Pod>();
    const condemned: Pod[] = [];
    for (const p of pods) {
      const ord = ordinalOf(name, p)!;
      if (ord >= start && ord < end) members.set(ord, p);
      else condemned.push(p);
    }
    condemned.sort((a, b) => ordinalOf(name, b)! - ordinalOf(name, a)!);

    // Missing and failed members, lowest ordinal first.
    for (let ord = start; ord < end; ord++) {
      const pod = members.get(ord);
      if (!pod) {
        // Below the partition pods keep the current revision; the rest get the update.
        const rev = rolling && ord < start + partition ? current : update;
        await this.createPod(set, ord, rev, signal);
        if (!parallel) return;
        continue;
      }
      if (isFinished(pod) && !pod.metadata.deletionTimestamp) {
        await this.deletePod(set, pod, signal, `StatefulSet ${set.metadata.namespace}/${name} is recreating failed Pod ${pod.metadata.name}`);
        if (!parallel) return;
        continue;
      }
      if (!parallel && !isHealthy(pod)) return;
    }

    // Surplus pods, highest ordinal first.
    for (const pod of condemned) {
      if (pod.metadata.deletionTimestamp) {
        if (parallel) continue;
        return;
      }
      await this.deletePod(set, pod, signal);
      if (!parallel) return;
    }

    if (!rolling) return;
    // Rolling update: from the top down to the partition, one pod at a time.
    for (let ord = end - 1; ord >= start + partition; ord--) {
      const pod = members.get(ord);
      if (!pod) return;
      if (revisionName(pod) !== update.metadata.name && !pod.metadata.deletionTimestamp) {
        this.ctx.log.info({ statefulset: `${set.metadata.namespace}/${name}`, pod: pod.metadata.name, revision: update.metadata.name }, 'rolling update: replacing pod');
        await this.deletePod(set, pod, signal);
        return;
      }
      if (!isHealthy(pod)) return;
    }
  }

  private async createPod(set: StatefulSet, ordinal: number, rev: ControllerRevision, signal: AbortSignal): Promise<void> {
    const podName = `${set.metadata.name}-${ordinal}`;
    const template = withClaimVolumes(templateOf(rev), set.spec?.volumeClaimTemplates, podName) as PodTemplateSpec;
    const pod = PodControl.podFromTemplate(template, set, controllerRefTo(set, 'apps/v1', 'StatefulSet'));
    delete pod.metadata.generateName;
    pod.metadata.name = podName;
    pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [CONTROLLER_REVISION_HASH_LABEL]: rev.metadata.name!, [POD_NAME_LABEL]: podName, [POD_INDEX_LABEL]: String(ordinal) };
    const spec = pod.spec as { hostname?: string; subdomain?: string };
    spec.hostname = podName;
    if (set.spec?.serviceName) spec.subdomain = set.spec.serviceName;
    const what = `Pod ${podName} in StatefulSet ${set.metadata.name}`;
    await this.createClaims(set, podName, signal);
    try {
      await this.ctx.client.create(objectPath('/api/v1', 'pods', set.metadata.namespace!), pod, { signal });
      this.recorder.event(set, 'Normal', 'SuccessfulCreate', `create ${what} successful`);
    } catch (e) {
      // The cache has not seen our last create yet; the pod is there.
      if (isStatusError(e, 'AlreadyExists') || isNamespaceTerminating(e)) return;
      this.recorder.event(set, 'Warning', 'FailedCreate', `create ${what} failed error: ${errorText(e)}`);
      throw e;
    }
  }

  /**
   * Each claim template's claim for a pod, `<template>-<pod>`, made before the pod (upstream
   * createPersistentVolumeClaims): labelled with the template's labels and the set's selector, kept
   * when it exists, owned by the set when its retention policy deletes claims with it.
   */
  private async createClaims(set: StatefulSet, podName: string, signal: AbortSignal): Promise<void> {
    const namespace = set.metadata.namespace!;
    const matchLabels = obj(obj(set.spec?.selector).matchLabels) as Record<string, string>;
    const deleteWithSet = obj(set.spec?.persistentVolumeClaimRetentionPolicy).whenDeleted === 'Delete';
    for (const t of Array.isArray(set.spec?.volumeClaimTemplates) ? set.spec.volumeClaimTemplates : []) {
      const template = obj(t);
      const meta = obj(template.metadata);
      const templateName = typeof meta.name === 'string' ? meta.name : '';
      if (!templateName) continue;
      const claimName = `${templateName}-${podName}`;
      const claim = {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: claimName,
          namespace,
          labels: { ...(obj(meta.labels) as Record<string, string>), ...matchLabels },
          ...(isObject(meta.annotations) ? { annotations: meta.annotations } : {}),
          ...(deleteWithSet ? { ownerReferences: [controllerRefTo(set, 'apps/v1', 'StatefulSet')] } : {}),
        },
        spec: template.spec,
      };
      const what = `Claim ${claimName} Pod ${podName} in StatefulSet ${set.metadata.name}`;
      try {
        await this.ctx.client.create(objectPath('/api/v1', 'persistentvolumeclaims', namespace), claim, { signal });
        this.recorder.event(set, 'Normal', 'SuccessfulCreate', `create ${what} success`);
      } catch (e) {
        if (isStatusError(e, 'AlreadyExists') || isNamespaceTerminating(e)) continue;
        this.recorder.event(set, 'Warning', 'FailedCreate', `create ${what} failed error: ${errorText(e)}`);
        throw e;
      }
    }
  }

  private async deletePod(set: StatefulSet, pod: Pod, signal: AbortSignal, why?: string): Promise<void> {
    const what = `Pod ${pod.metadata.name} in StatefulSet ${set.metadata.name}`;
    try {
      await this.ctx.client.delete(objectPath('/api/v1', 'pods', pod.metadata.namespace!, pod.metadata.name!), { preconditions: { uid: pod.metadata.uid } }, { signal });
      if (why) this.recorder.event(set, 'Warning', 'RecreatingFailedPod', why);
      this.recorder.event(set, 'Normal', 'SuccessfulDelete', `delete ${what} successful`);
    } catch (e) {
      if (isStatusError(e, 'NotFound') || isStatusError(e, 'Conflict')) return;
      this.recorder.event(set, 'Warning', 'FailedDelete', `delete ${what} failed error: ${errorText(e)}`);
      throw e;
    }
  }

  /** Upstream's status: counts by readiness and revision; the update revision becomes current once every pod runs it. */
  private async writeStatus(set: StatefulSet, pods: Pod[], current: ControllerRevision, update: ControllerRevision, signal: AbortSignal): Promise<void> {
    const now = this.ctx.clock.now();
    const minReady = set.spec?.minReadySeconds ?? 0;
    const status: StatefulSetStatus = { observedGeneration: set.metadata.generation ?? 0, replicas: 0, availableReplicas: 0 };
    let ready = 0;
    let currentReplicas = 0;
    let updated = 0;
    for (const p of pods) {
      status.replicas++;
      if (p.status?.phase === 'Running' && isPodReady(p)) {
        ready++;
        if (isPodAvailable(p, minReady, now)) status.availableReplicas++;
      }
      if (p.metadata.deletionTimestamp) continue;
      if (revisionName(p) === current.metadata.name) currentReplicas++;
      if (revisionName(p) === update.metadata.name) updated++;
    }
    let currentRevision = current.metadata.name!;
    const rolling = (set.spec?.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate';
    if (rolling && updated === status.replicas && ready === status.replicas) {
      currentReplicas = updated;
      currentRevision = update.metadata.name!;
    }
    // Go omits these when zero.
    if (ready > 0) status.readyReplicas = ready;
    if (currentReplicas > 0) status.currentReplicas = currentReplicas;
    if (updated > 0) status.updatedReplicas = updated;
    status.currentRevision = currentRevision;
    status.updateRevision = update.metadata.name!;
    if (set.status?.collisionCount !== undefined) status.collisionCount = set.status.collisionCount;
    if (isObject(set.status) && Array.isArray(set.status.conditions)) status.conditions = set.status.conditions;
    if (semanticEqual(set.status, status)) return;
    await this.ctx.client.replace(`${this.path(set)}/status`, { ...set, status }, { signal });
  }
}
