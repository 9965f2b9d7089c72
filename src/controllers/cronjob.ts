// CronJob controller (upstream pkg/controller/cronjob, v2): at each scheduled time a Job named
// <cronjob>-<scheduled time in Unix minutes> from the job template, with
//  - only the latest missed time run (upstream's catch-up), and not at all once more than
//    startingDeadlineSeconds late;
//  - concurrencyPolicy: Allow runs alongside active Jobs, Forbid skips the time while one is
//    active, Replace deletes the active ones first;
//  - status.active, lastScheduleTime and lastSuccessfulTime kept, and finished Jobs beyond
//    successfulJobsHistoryLimit / failedJobsHistoryLimit deleted oldest first;
//  - the next run woken by a timer on the injected clock.
import { errorText } from '../util/error-text.js';
import { setMaxListeners } from 'node:events';
import { isStatusError } from '../api/errors.js';
import { scheduleTimes, type CronJob, type ScheduleTimes } from '../api/kinds/cronjob.js';
import { jobCondition, type Job } from '../api/kinds/job.js';
import { deepClone, semanticEqual } from '../api/kinds/json.js';
import type { Informer } from '../client/informer.js';
import { objectKeyOf } from '../client/informer.js';
import { rfc3339 } from '../util/time.js';
import type { EventRecorder } from '../controller-kit/events.js';
import { PATHS } from '../controller-kit/informers.js';
import type { Controller, ControllerContext } from '../controller-kit/manager.js';
import { conflictsRequeue, controllerOf, controllerRefTo, objectPath, OwnerIndex } from './pod-control.js';
import { ReconcileLoop, type Reconciler, type ReconcileResult } from '../controller-kit/reconciler.js';

export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
const BATCH = '/apis/batch/v1';

function finishedAt(job: Job): number {
  return Date.parse(job.status?.completionTime ?? jobCondition(job, 'Failed')?.lastTransitionTime ?? job.metadata.creationTimestamp ?? '') || 0;
}

export class CronJobController implements Controller {
  readonly name = 'cronjob';

  start(ctx: ControllerContext, signal: AbortSignal): void {
    setMaxListeners(0, signal);
    const cronJobs = ctx.informers.for<CronJob>(PATHS.cronjobs);
    const jobs = ctx.informers.for<Job>(PATHS.jobs);
    const owned = new OwnerIndex(jobs);
    const loop = new ReconcileLoop(new CronJobReconciler(ctx, cronJobs, owned), { clock: ctx.clock, log: ctx.log, metrics: ctx.metrics }, 1);
    const enqueue = (cj: CronJob) => loop.enqueue(objectKeyOf(cj));
    cronJobs.addHandlers({ add: enqueue, update: (_o, cj) => enqueue(cj), delete: enqueue });
    const jobChanged = (job: Job) => {
      const ref = controllerOf(job);
      if (ref?.kind === 'CronJob') loop.enqueue(`${job.metadata.namespace}/${ref.name}`);
    };
    jobs.addHandlers({ add: jobChanged, update: (_o, j) => jobChanged(j), delete: jobChanged });
    void Promise.all([cronJobs.waitForSync(), jobs.waitForSync()]).then(() => loop.run(signal));
  }
}

class CronJobReconciler implements Reconciler {
  readonly name = 'cronjob';
  private readonly recorder: EventRecorder;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly cronJobs: Informer<CronJob>,
    private readonly owned: OwnerIndex<Job>,
  ) {
    this.recorder = ctx.recorder('cronjob-controller');
  }

  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    return conflictsRequeue(signal, () => this.sync(key, signal));
  }

  private async sync(key: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const cj = this.cronJobs.get(key);
    if (!cj || cj.metadata.deletionTimestamp) return;
    const ns = cj.metadata.namespace!;
    const spec = cj.spec ?? {};
    const now = this.ctx.clock.now();
    const jobs = this.owned.owned(cj.metadata.uid).filter((j) => !j.metadata.deletionTimestamp);
    let active = jobs.filter((j) => !jobCondition(j, 'Complete') && !jobCondition(j, 'Failed'));
    const succeeded = jobs.filter((j) => jobCondition(j, 'Complete'));
    const failed = jobs.filter((j) => jobCondition(j, 'Failed'));
    await this.trim(cj, succeeded, spec.successfulJobsHistoryLimit, signal);
    await this.trim(cj, failed, spec.failedJobsHistoryLimit, signal);

    let lastScheduleTime = cj.status?.lastScheduleTime;
    let requeueAfterMs: number | undefined;
    if (spec.suspend !== true && typeof spec.schedule === 'string') {
      const earliest = Date.parse(lastScheduleTime ?? cj.metadata.creationTimestamp ?? '') || now;
      let times: ScheduleTimes;
      try {
        times = scheduleTimes(spec.schedule, spec.timeZone, earliest, now);
      } catch (e) {
        this.recorder.event(cj, 'Warning', 'UnparseableSchedule', `unparseable schedule: ${JSON.stringify(spec.schedule)} : ${errorText(e)}`);
        return;
      }
      const { latest, next } = times;
      if (next !== undefined) requeueAfterMs = Math.max(1, next - now);
      const deadline = typeof spec.startingDeadlineSeconds === 'number' ? spec.startingDeadlineSeconds * 1000 : undefined;
      if (latest !== undefined && latest > earliest && latest <= now) {
        if (deadline !== undefined && now - latest > deadline) {
          this.recorder.event(cj, 'Warning', 'MissSchedule', `Missed scheduled time to start a job: ${rfc3339(latest)}`);
        } else if (spec.concurrencyPolicy === 'Forbid' && active.length > 0) {
          // Upstream leaves the time for later: it runs once the active Job has finished, if still in time.
          requeueAfterMs = Math.min(requeueAfterMs ?? 10_000, 10_000);
        } else {
          if (spec.concurrencyPolicy === 'Replace') {
            for (const j of active) await this.remove(cj, j, signal);
            active = [];
          }
          const made = await this.createJob(cj, latest, signal);
          if (made) active.push(made);
          lastScheduleTime = rfc3339(latest);
        }
      }
    }

    const lastSuccess = succeeded.reduce((t, j) => Math.max(t, finishedAt(j)), 0);
    const status: NonNullable<CronJob['status']> = {
      ...(active.length > 0 ? { active: active.map((j) => ({ apiVersion: 'batch/v1', kind: 'Job', name: j.metadata.name!, namespace: ns, uid: j.metadata.uid! })) } : {}),
      ...(lastScheduleTime ? { lastScheduleTime } : {}),
      ...(lastSuccess > 0 ? { lastSuccessfulTime: rfc3339(lastSuccess) } : cj.status?.lastSuccessfulTime ? { lastSuccessfulTime: cj.status.lastSuccessfulTime } : {}),
    };
    if (!semanticEqual(status, cj.status ?? {})) {
      await this.ctx.client.replace(`${objectPath(BATCH, 'cronjobs', ns, cj.metadata.name!)}/status`, { ...cj, status }, { signal });
    }
    if (requeueAfterMs !== undefined) return { requeueAfterMs };
  }

  /** The Job for one scheduled time; an existing one (a retried sync) counts as made. */
  private async createJob(cj: CronJob, at: number, signal: AbortSignal): Promise<Job | undefined> {
    const ns = cj.metadata.namespace!;
    const tmpl = cj.spec?.jobTemplate ?? {};
    const name = `${cj.metadata.name}-${Math.floor(at / 60_000)}`;
    const job: Job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name,
        namespace: ns,
        labels: { ...(tmpl.metadata?.labels ?? {}) },
        annotations: { ...(tmpl.metadata?.annotations ?? {}), [SCHEDULED_TIMESTAMP_ANNOTATION]: rfc3339(at) },
        ownerReferences: [controllerRefTo(cj, 'batch/v1', 'CronJob')],
      },
      spec: deepClone(tmpl.spec ?? {}),
    };
    try {
      const made = await this.ctx.client.create<Job>(objectPath(BATCH, 'jobs', ns), job, { signal });
      this.recorder.event(cj, 'Normal', 'SuccessfulCreate', `Created job ${name}`);
      return made;
    } catch (e) {
      if (isStatusError(e, 'AlreadyExists')) return undefined;
      this.recorder.event(cj, 'Warning', 'FailedCreate', `Error creating job: ${errorText(e)}`);
      throw e;
    }
  }

  /** Keeps the newest `limit` finished Jobs of one kind. */
  private async trim(cj: CronJob, finished: Job[], limit: number | undefined, signal: AbortSignal): Promise<void> {
    if (typeof limit !== 'number' || finished.length <= limit) return;
    const oldest = [...finished].sort((a, b) => finishedAt(a) - finishedAt(b)).slice(0, finished.length - limit);
    for (const j of oldest) await this.remove(cj, j, signal);
  }

  private async remove(cj: CronJob, job: Job, signal: AbortSignal): Promise<void> {
    try {
      await this.ctx.client.delete(objectPath(BATCH, 'jobs', job.metadata.namespace!, job.metadata.name!), { propagationPolicy: 'Background', preconditions: { uid: job.metadata.uid } }, { signal });
      this.recorder.event(cj, 'Normal', 'SuccessfulDelete', `Deleted job ${job.metadata.name}`);
    } catch (e) {
      if (!isStatusError(e, 'NotFound') && !isStatusError(e, 'Conflict')) throw e;
    }
  }
}
