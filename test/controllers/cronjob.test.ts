// The CronJob controller on a real in-process server, its time on a FakeClock.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CronJob } from '../../src/api/kinds/cronjob.js';
import type { Job } from '../../src/api/kinds/job.js';
import { isStatusError } from '../../src/api/errors.js';
import { CronJobController } from '../../src/controllers/cronjob.js';
import { DEFAULT_CONTROLLER_OPTIONS, controllerContext } from '../../src/controller-kit/manager.js';
import { FakeClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';
import { eventually, events, nsPath, startHarness, type Harness } from './workload-harness.js';

describe('CronJob controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const cronJob = (name: string, spec: Partial<NonNullable<CronJob['spec']>>): CronJob => ({
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name },
    spec: { schedule: '*/1 * * * *', jobTemplate: { metadata: { labels: { from: name } }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox', command: ['true'] }] } } } }, ...spec },
  });
  const jobs = async (ns: string) => (await h.client.list<Job>(nsPath(ns, 'jobs', undefined, 'batch/v1'), {})).items.sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
  const complete = (ns: string, job: Job) =>
    h.client.patch(`${nsPath(ns, 'jobs', job.metadata.name!, 'batch/v1')}/status`, { status: { conditions: [{ type: 'Complete', status: 'True' }], completionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } }, 'merge');

  function start(clock: FakeClock) {
    const ac = new AbortController();
    const ctx = controllerContext(h.client, clock, silentLogger(), DEFAULT_CONTROLLER_OPTIONS);
    new CronJobController().start(ctx, ac.signal);
    ctx.informers.start(ac.signal);
    return () => ac.abort();
  }

  /** Asserts that `fn` holds at every poll for `ms` (for things that must not happen). */
  async function stays(fn: () => Promise<boolean>, ms: number, what: string): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      assert.ok(await fn(), what);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Moves the fake clock to just past the next minute boundary. */
  async function nextMinute(clock: FakeClock): Promise<void> {
    await clock.advance(60_000 - (clock.now() % 60_000) + 1_000);
  }

  it('creates one Job per scheduled time, named by the minute; Forbid waits for the active one; history is trimmed', async () => {
    const ns = await h.namespace('cron');
    const clock = new FakeClock(Date.now());
    const stop = start(clock);
    try {
      await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('tick', { concurrencyPolicy: 'Forbid', successfulJobsHistoryLimit: 1 }));
      await nextMinute(clock);
      await eventually(async () => (await jobs(ns)).length === 1, 5000, 'first Job');
      const [first] = await jobs(ns);
      assert.equal(first!.metadata.name, `tick-${Math.floor((clock.now() - 1_000) / 60_000)}`);
      assert.equal(first!.metadata.labels?.from, 'tick');
      assert.ok(first!.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']);
      assert.deepEqual(first!.metadata.ownerReferences?.map((r) => [r.kind, r.controller]), [['CronJob', true]]);
      await eventually(async () => {
        const cj = await h.client.get<CronJob>(nsPath(ns, 'cronjobs', 'tick', 'batch/v1'));
        return cj.status?.active?.length === 1 && cj.status.lastScheduleTime !== undefined;
      }, 5000, 'status: one active, lastScheduleTime');

      // Forbid: the next minute passes while the first Job runs.
      await nextMinute(clock);
      await stays(async () => (await jobs(ns)).length === 1, 500, 'no second Job while the first is active');
      await complete(ns, first!);
      await clock.advance(10_000);
      await eventually(async () => (await jobs(ns)).length === 2, 5000, 'the missed time runs once the first finished');

      // successfulJobsHistoryLimit 1: finishing the second removes the first.
      const second = (await jobs(ns)).find((j) => j.metadata.name !== first!.metadata.name)!;
      await complete(ns, second);
      await eventually(async () => {
        const names = (await jobs(ns)).map((j) => j.metadata.name);
        return names.length === 1 && names[0] === second.metadata.name;
      }, 5000, 'only the newest finished Job kept');
      await eventually(async () => (await h.client.get<CronJob>(nsPath(ns, 'cronjobs', 'tick', 'batch/v1'))).status?.lastSuccessfulTime !== undefined, 5000, 'lastSuccessfulTime');
    } finally {
      stop();
    }
  });

  it('@every counts from the creation time, and a day no month has never fires, without a warning', async () => {
    const ns = await h.namespace('cron3');
    const clock = new FakeClock(Date.now());
    const stop = start(clock);
    try {
      const created = await h.client.create<CronJob>(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('every', { schedule: '@every 90s' }));
      await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('never', { schedule: '0 0 31 2 *' }));
      await clock.advance(95_000);
      await eventually(async () => (await jobs(ns)).length === 1, 5000, 'a Job 90 s after creation');
      const at = Date.parse(created.metadata.creationTimestamp!) + 90_000;
      assert.equal((await jobs(ns))[0]!.metadata.name, `every-${Math.floor(at / 60_000)}`);
      await clock.advance(90_000);
      await eventually(async () => (await jobs(ns)).length === 2, 5000, 'a second Job 90 s later');
      assert.ok((await jobs(ns)).every((j) => j.metadata.labels?.from === 'every'), 'the never-firing CronJob made no Job');
      assert.deepEqual((await events(h.client, ns, 'never')).map((e) => e.reason), []);
    } finally {
      stop();
    }
  });

  it('suspend holds, startingDeadlineSeconds skips a time too late, and bad schedules are 422s', async () => {
    const ns = await h.namespace('cron2');
    const clock = new FakeClock(Date.now());
    const stop = start(clock);
    try {
      await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('held', { suspend: true }));
      await nextMinute(clock);
      await stays(async () => (await jobs(ns)).length === 0, 500, 'a suspended CronJob starts nothing');
      await h.client.delete(nsPath(ns, 'cronjobs', 'held', 'batch/v1'));
      for (const [schedule, re] of [['61 * * * *', /spec.schedule/], ['TZ=UTC * * * * *', /use timeZone field instead/]] as const) {
        const e = await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('bad', { schedule })).then(() => undefined, (err: unknown) => err);
        assert.ok(isStatusError(e, 'Invalid'), String(e));
        assert.match((e as Error).message, re);
      }
      const tz = await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('badtz', { timeZone: 'Mars/Olympus' })).then(() => undefined, (err: unknown) => err);
      assert.ok(isStatusError(tz, 'Invalid'));
    } finally {
      stop();
    }
    // A controller that first looks 30 s after a scheduled time, with a 10 s deadline, skips it.
    const late = new FakeClock(Math.ceil((Date.now() + 60_000) / 60_000) * 60_000 + 30_000);
    await h.client.create(nsPath(ns, 'cronjobs', undefined, 'batch/v1'), cronJob('late', { startingDeadlineSeconds: 10 }));
    const stopLate = start(late);
    try {
      await eventually(async () => (await events(h.client, ns, 'late')).some((e) => e.reason === 'MissSchedule'), 5000, 'MissSchedule event');
      assert.equal((await jobs(ns)).length, 0);
    } finally {
      stopLate();
    }
  });
});
