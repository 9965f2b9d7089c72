// Job controller (upstream pkg/controller/job), for NonIndexed and Indexed Jobs:
//  - keeps up to `parallelism` pods active until `completions` pods have succeeded (Indexed: one
//    success per index 0..completions-1; no completions: until any pod succeeded and none runs);
//  - a failed pod is replaced after a back-off of 10 s doubling per failure (at most 6 minutes);
//    more failures than `backoffLimit` (with restartPolicy OnFailure, container restarts count)
//    fail the Job with BackoffLimitExceeded, running longer than `activeDeadlineSeconds` with
//    DeadlineExceeded; either way its active pods are deleted;
//  - `suspend` deletes the active pods and holds; resuming starts the clock again;
//  - `ttlSecondsAfterFinished` deletes a finished Job (and, in the background, its pods).
// Counts come from the pods that exist (upstream also tracks pods with a finalizer so that counts
// survive pod deletion; skiff's pod GC only removes finished pods beyond its threshold).
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import { COMPLETION_INDEX, jobCondition, type Job, type JobCondition, type JobStatus } from '../api/kinds/job.js';
import { semanticEqual } from '../api/kinds/json.js';
import { isPodReady, type Pod } from '../api/kinds/pod.js';
import { workloadSelector } from '../api/kinds/replicaset.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { rfc3339 } from '../util/time.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import {
  allowManyRequests,
  claimObjects,
  conflictsRequeue,
  controllerRefTo,
  Expectations,
  objectPath,
  OwnerIndex,
  ownerStillThere,
  PodControl,
  slowStartBatch,
  watchOwnedPods,
} from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';
import { setCondition } from './deployment-rollout.js';

const BACKOFF_BASE_MS = 10_000;
const BACKOFF_MAX_MS = 6 * 60_000;

/** Upstream's text form of a set of indexes: "1,3-5,7". */
export function formatIndexes(indexes: number[]): string {
  const sorted = [...new Set(indexes)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(j - i >= 2 ? `${sorted[i]}-${sorted[j]}` : sorted.slice(i, j + 1).join(','));
    i = j + 1;
  }
  return parts.join(',');
}

function indexOf(pod: Pod): number | undefined {
  const v = pod.metadata.annotations?.[COMPLETION_INDEX] ?? pod.metadata.labels?.[COMPLETION_INDEX];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}

function isActive(p: Pod): boolean {
  const phase = p.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !p.metadata.deletionTimestamp;
}

/** When a pod finished: its containers' last finishedAt, else its creation. */
function finishedMs(p: Pod): number {
  let latest = 0;
  for (const c of p.status?.containerStatuses ?? []) latest = Math.max(latest, Date.parse(c.state?.terminated?.finishedAt ?? '') || 0);
  return latest || Date.parse(p.metadata.creationTimestamp ?? '') || 0;
}

function condition(type: string, status: 'True' | 'False', reason: string, message: string, now: string): JobCondition {
  return { type, status, lastProbeTime: now, lastTransitionTime: now, reason, message };
}

export class JobController implements Controller {
  readonly name = 'job';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    allowManyRequests(signal);
    setMaxListeners(0, signal);
    const jobs = ctx.informers.for<Job>(PATHS.jobs);
    const pods = ctx.informers.for<Pod>(PATHS.pods, { readOnly: true });
    const podIndex = new OwnerIndex(pods);
    const expectations = new Expectations(ctx.clock);
    const loop = new ReconcileLoop(new JobReconciler(ctx, jobs, podIndex, expectations), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 2);
    const enqueue = (j: Job) => loop.enqueue(objectKeyOf(j));
    jobs.addHandlers({
      add: enqueue,
      update: (_o, j) => enqueue(j),
      delete: (j) => {
        expectations.forget(objectKeyOf(j));
        enqueue(j);
      },
    });
    watchOwnedPods({ kind: 'Job', owners: jobs, pods, expectations, enqueue, selector: (j) => workloadSelector(j.spec?.selector) });
    void Promise.all([jobs.waitForSync(), pods.waitForSync()]).then(() => loop.run(signal));
  }
}

class JobReconciler implements Reconciler {
  readonly name = 'job';
  private readonly recorder: EventRecorder;
  private readonly pods: PodControl;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly jobs: Informer<Job>,
    private readonly podIndex: OwnerIndex<Pod>,
    private readonly expectations: Expectations,
  ) {
    this.recorder = ctx.recorder('job-controller');
    this.pods = new PodControl(ctx.client, this.recorder, ctx.log);
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private path(job: Job): string {
    return objectPath('/apis/batch/v1', 'jobs', job.metadata.namespace!, job.metadata.name!);
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const job = this.jobs.get(key);
    if (!job) {
      this.expectations.forget(key);
      return;
    }
    if (job.metadata.deletionTimestamp) return;
    const now = this.ctx.clock.now();
    const finished = jobCondition(job, 'Complete') ?? jobCondition(job, 'Failed');
    if (finished) {
      // Pods still running when the Job finished (created before the cache showed them) go too.
      await this.deletePods(job, this.podIndex.owned(job.metadata.uid).filter(isActive), signal);
      return this.expireFinished(job, finished, now, signal);
    }
    const selector = workloadSelector(job.spec?.selector);
    if (!selector || selector.isEmpty()) return;
    const ns = job.metadata.namespace!;
    const claim = await claimObjects<Pod>({
      client: this.ctx.client,
      owner: job,
      ownerRef: controllerRefTo(job, 'batch/v1', 'Job'),
      selector,
      prefix: '/api/v1',
      resource: 'pods',
      candidates: [...this.podIndex.owned(job.metadata.uid), ...this.podIndex.orphansIn(ns)],
      canAdopt: () => ownerStillThere(this.ctx.client, this.path(job), job, signal),
      log: this.ctx.log,
      signal,
    });
    if (claim.errors.length > 0) throw claim.errors[0];
    const pods = claim.claimed;
    const spec = job.spec ?? {};
    const indexed = spec.completionMode === 'Indexed';
    const completions = typeof spec.completions === 'number' ? spec.completions : undefined;
    const parallelism = typeof spec.parallelism === 'number' ? spec.parallelism : 1;
    const backoffLimit = typeof spec.backoffLimit === 'number' ? spec.backoffLimit : 6;
    const active = pods.filter(isActive);
    const succeededPods = pods.filter((p) => p.status?.phase === 'Succeeded');
    const failedPods = pods.filter((p) => p.status?.phase === 'Failed');
    const completedIndexes = indexed ? [...new Set(succeededPods.map(indexOf).filter((i): i is number => i !== undefined && i < (completions ?? 0)))] : [];
    const succeeded = indexed ? completedIndexes.length : succeededPods.length;
    // With OnFailure the kubelet restarts containers in place: their restarts count as failures
    // (upstream pastBackoffLimitOnFailure, init containers included).
    const onFailure = spec.template?.spec?.restartPolicy === 'OnFailure';
    const restarts = onFailure ? active.reduce((n, p) => n + [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])].reduce((m, c) => m + (c.restartCount ?? 0), 0), 0) : 0;
    const pastBackoffLimit = failedPods.length > backoffLimit || (onFailure && (backoffLimit === 0 ? restarts > 0 : restarts >= backoffLimit));
    const nowText = rfc3339(now);
    const status: JobStatus = { ...(job.status ?? {}) };
    /** The Complete or Failed condition this sync sets, if the Job finishes now. */
    let done: JobCondition | undefined;
    let requeueAfterMs: number | undefined;
    let toDelete: Pod[] = [];
    let toCreate: (number | undefined)[] = [];

    if (spec.suspend === true) {
      toDelete = active;
      delete status.startTime;
      setCondition(status, condition('Suspended', 'True', 'JobSuspended', 'Job suspended', nowText));
    } else {
      if (jobCondition(job, 'Suspended')) setCondition(status, condition('Suspended', 'False', 'JobResumed', 'Job resumed', nowText));
      status.startTime ??= nowText;
      const started = Date.parse(status.startTime) || now;
      const deadline = typeof spec.activeDeadlineSeconds === 'number' ? started + spec.activeDeadlineSeconds * 1000 : undefined;
      const complete = indexed ? completedIndexes.length >= (completions ?? 0) : completions !== undefined ? succeeded >= completions : succeeded > 0 && active.length === 0;
      if (complete) {
        toDelete = active;
        done = condition('Complete', 'True', 'CompletionsReached', 'Reached expected number of succeeded pods', nowText);
        status.completionTime = nowText;
      } else if (pastBackoffLimit) {
        toDelete = active;
        done = condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', nowText);
      } else if (deadline !== undefined && now >= deadline) {
        toDelete = active;
        done = condition('Failed', 'True', 'DeadlineExceeded', 'Job was active longer than specified deadline', nowText);
      } else {
        if (deadline !== undefined) requeueAfterMs = deadline - now;
        // Replacements for failed pods wait out a back-off counted from the last failure.
        const lastFailure = failedPods.reduce((t, p) => Math.max(t, finishedMs(p)), 0);
        const backoff = failedPods.length > 0 ? Math.min(BACKOFF_BASE_MS * 2 ** (failedPods.length - 1), BACKOFF_MAX_MS) : 0;
        const waitMs = lastFailure + backoff - now;
        if (indexed) {
          // One active pod per index still to do: duplicates, indexes out of range or already
          // done, and pods beyond parallelism (highest indexes first) are deleted.
          const done = new Set(completedIndexes);
          const kept = new Map<number, Pod>();
          for (const p of [...active].sort((a, b) => Number(isPodReady(b)) - Number(isPodReady(a)))) {
            const i = indexOf(p);
            if (i === undefined || i >= (completions ?? 0) || done.has(i) || kept.has(i)) toDelete.push(p);
            else kept.set(i, p);
          }
          const byIndex = [...kept.keys()].sort((a, b) => a - b);
          for (const i of byIndex.slice(parallelism)) toDelete.push(kept.get(i)!);
          const busy = new Set([...done, ...byIndex]);
          const missing = Array.from({ length: completions ?? 0 }, (_, i) => i).filter((i) => !busy.has(i));
          toCreate = missing.slice(0, Math.max(0, parallelism - Math.min(parallelism, kept.size)));
        } else {
          // Without completions (a work queue) the first success means no new pods; the running
          // ones finish their work.
          const want = completions !== undefined ? Math.min(parallelism, completions - succeeded) : succeeded > 0 ? active.length : parallelism;
          if (active.length < want) toCreate = Array.from({ length: want - active.length }, () => undefined);
          else if (active.length > want) toDelete = [...active].sort((a, b) => Number(isPodReady(a)) - Number(isPodReady(b))).slice(0, active.length - want);
        }
        if (toCreate.length > 0 && waitMs > 0) {
          toCreate = [];
          requeueAfterMs = Math.min(requeueAfterMs ?? waitMs, waitMs);
        }
      }
    }

    if (done) setCondition(status, done);
    const finishing = done !== undefined;
    if (finishing || spec.suspend === true) {
      // A finishing or suspended Job stops its pods whatever creations are still unconfirmed.
      await this.deletePods(job, toDelete, signal);
    } else if (this.expectations.satisfied(key)) {
      await this.deletePods(job, toDelete, signal, key);
      await this.createPods(job, key, toCreate, signal);
    } else {
      toCreate = [];
      requeueAfterMs = Math.min(requeueAfterMs ?? 1000, 1000);
    }

    const stillActive = finishing || spec.suspend === true ? 0 : active.length + toCreate.length;
    const next: JobStatus = {
      ...status,
      active: stillActive,
      succeeded,
      // Pods a failing Job stops count as failed, as upstream counts them.
      failed: failedPods.length + (done?.type === 'Failed' ? toDelete.length : 0),
      ready: finishing ? 0 : active.filter(isPodReady).length,
      terminating: pods.filter((p) => p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed').length,
      ...(indexed ? { completedIndexes: formatIndexes(completedIndexes) } : {}),
    };
    if (next.conditions?.length === 0) delete next.conditions;
    if (!semanticEqual(next, job.status ?? {})) {
      await this.ctx.client.replace(`${this.path(job)}/status`, { ...job, status: next }, { signal });
      if (done) {
        this.recorder.event(job, done.type === 'Complete' ? 'Normal' : 'Warning', done.type === 'Complete' ? 'Completed' : done.reason ?? 'Failed', done.type === 'Complete' ? 'Job completed' : done.message ?? '');
      }
    }
    if (requeueAfterMs !== undefined) return { requeueAfterMs: Math.max(1, requeueAfterMs) };
  }

  private async createPods(job: Job, key: string, indexes: (number | undefined)[], signal: AbortSignal): Promise<void> {
    if (indexes.length === 0) return;
    const ref = controllerRefTo(job, 'batch/v1', 'Job');
    this.expectations.expect(key, indexes.length);
    let next = 0;
    const { successes, error } = await slowStartBatch(indexes.length, 1, async () => {
      const index = indexes[next++];
      await this.pods.createPod(job, job.spec?.template, ref, index === undefined ? {} : { mutate: (pod) => withIndex(pod, job, index) }, signal);
    });
    for (let i = successes; i < indexes.length; i++) this.expectations.creationObserved(key);
    if (error) throw error;
  }

  /** Deletes pods; with `key`, as expectations the next sync waits for. */
  private async deletePods(job: Job, pods: Pod[], signal: AbortSignal, key?: string): Promise<void> {
    if (pods.length === 0) return;
    if (key) this.expectations.expect(key, 0, pods.map(objectKeyOf));
    for (const p of pods) {
      const deleted = await this.pods.deletePod(job, p.metadata.namespace!, p.metadata.name!, signal).catch((e: unknown) => {
        if (key) this.expectations.deletionObserved(key, objectKeyOf(p));
        throw e;
      });
      if (!deleted && key) this.expectations.deletionObserved(key, objectKeyOf(p));
    }
  }

  /** A finished Job with ttlSecondsAfterFinished goes that long after it finished. */
  private async expireFinished(job: Job, finished: JobCondition, now: number, signal: AbortSignal): Promise<ReconcileResult | void> {
    const ttl = job.spec?.ttlSecondsAfterFinished;
    if (typeof ttl !== 'number') return;
    const at = (Date.parse(job.status?.completionTime ?? finished.lastTransitionTime ?? '') || now) + ttl * 1000;
    if (now < at) return { requeueAfterMs: at - now };
    try {
      await this.ctx.client.delete(this.path(job), { propagationPolicy: 'Background', preconditions: { uid: job.metadata.uid } }, { signal });
      this.ctx.log.info({ job: objectKeyOf(job), ttlSecondsAfterFinished: ttl }, 'deleted a finished job after its TTL');
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}

/** Indexed Job pods: the index in an annotation and label, JOB_COMPLETION_INDEX, hostname and name. */
function withIndex(pod: Pod, job: Job, index: number): void {
  const i = String(index);
  pod.metadata.generateName = `${job.metadata.name}-${i}-`;
  pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [COMPLETION_INDEX]: i };
  pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [COMPLETION_INDEX]: i };
  const spec = pod.spec!;
  spec.hostname ??= `${job.metadata.name}-${i}`;
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    c.env = [...(c.env ?? []).filter((e) => e.name !== 'JOB_COMPLETION_INDEX'), { name: 'JOB_COMPLETION_INDEX', valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } } }];
  }
}
