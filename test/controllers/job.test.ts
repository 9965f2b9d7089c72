import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Job } from '../../src/api/kinds/job.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { isStatusError } from '../../src/api/errors.js';
import { JobController, formatIndexes } from '../../src/controllers/job.js';
import { eventually, events, nsPath, pods, startControllers, startHarness, watchAll, type Harness } from './workload-harness.js';

type Outcome = 'Succeeded' | 'Failed' | 'Running';

function job(name: string, spec: Job['spec'] = {}): Job {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'work', image: 'busybox', command: ['true'] }] } }, ...spec },
  };
}

describe('Job controller', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  const jobPath = (ns: string, name?: string) => nsPath(ns, 'jobs', name, 'batch/v1');
  const getJob = (ns: string, name: string) => h.client.get<Job>(jobPath(ns, name));
  const condition = (j: Job, type: string) => j.status?.conditions?.find((c) => c.type === type && c.status === 'True');

  /**
   * Stands in for the agent: finishes each new pod as `outcome` says. A report still in flight
   * when the test stops it may meet a server that is shutting down; only failures before then count.
   */
  function kubelet(ns: string, outcome: (p: Pod) => Outcome) {
    const done = new Set<string>();
    let stopped = false;
    const watch = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
      for (const p of all) {
        if (done.has(p.metadata.uid!) || p.metadata.deletionTimestamp) continue;
        done.add(p.metadata.uid!);
        const phase = outcome(p);
        const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
        const state = phase === 'Running' ? { running: { startedAt: now } } : { terminated: { exitCode: phase === 'Succeeded' ? 0 : 1, reason: phase === 'Succeeded' ? 'Completed' : 'Error', startedAt: now, finishedAt: now } };
        void h.client
          .patch(`${nsPath(ns, 'pods', p.metadata.name!, 'v1')}/status`, { status: { phase, containerStatuses: [{ name: 'work', image: 'busybox', ready: phase === 'Running', restartCount: 0, state }] } }, 'merge')
          .catch((e: unknown) => {
            if (!stopped && !isStatusError(e, 'NotFound')) throw e;
          });
      }
    });
    return {
      stop: () => {
        stopped = true;
        watch.stop();
      },
    };
  }

  it('runs completions pods, at most parallelism at once, then is Complete', async () => {
    const ns = await h.namespace('job');
    let maxActive = 0;
    const watcher = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
      maxActive = Math.max(maxActive, all.filter((p) => !p.status?.phase || p.status.phase === 'Pending' || p.status.phase === 'Running').length);
    });
    const k = kubelet(ns, () => 'Succeeded');
    const running = startControllers(h.client, [new JobController()]);
    try {
      const created = await h.client.create<Job>(jobPath(ns), job('batch', { completions: 5, parallelism: 2 }));
      assert.deepEqual(created.spec?.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': created.metadata.uid } });
      assert.equal(created.spec?.template?.metadata?.labels?.['batch.kubernetes.io/job-name'], 'batch');
      assert.equal(created.spec?.backoffLimit, 6);
      await eventually(async () => condition(await getJob(ns, 'batch'), 'Complete'), 10_000, 'Complete');
      const j = await getJob(ns, 'batch');
      assert.deepEqual([j.status?.succeeded, j.status?.active, j.status?.failed], [5, 0, 0]);
      assert.ok(j.status?.startTime && j.status.completionTime);
      assert.equal(condition(j, 'Complete')?.reason, 'CompletionsReached');
      assert.equal((await pods(h.client, ns)).length, 5);
      assert.ok(maxActive <= 2, `at most 2 pods active at once (saw ${maxActive})`);
      assert.ok((await events(h.client, ns, 'batch')).some((e) => e.reason === 'Completed'));
    } finally {
      running.stop();
      k.stop();
      watcher.stop();
    }
  });

  it('fails with BackoffLimitExceeded, or DeadlineExceeded deleting its active pods', async () => {
    const ns = await h.namespace('job-fail');
    const k = kubelet(ns, (p) => (p.metadata.labels?.['batch.kubernetes.io/job-name'] === 'flaky' ? 'Failed' : 'Running'));
    const running = startControllers(h.client, [new JobController()]);
    try {
      await h.client.create(jobPath(ns), job('flaky', { backoffLimit: 0 }));
      await eventually(async () => condition(await getJob(ns, 'flaky'), 'Failed'), 10_000, 'Failed');
      const flaky = await getJob(ns, 'flaky');
      assert.equal(condition(flaky, 'Failed')?.reason, 'BackoffLimitExceeded');
      assert.equal(flaky.status?.failed, 1);

      // The pods may come and go before a poll sees them: count what was ever there.
      const seen = new Set<string>();
      const slowPods = watchAll<Pod>(h.client, nsPath(ns, 'pods', undefined, 'v1'), (all) => {
        for (const p of all) if (p.metadata.labels?.['batch.kubernetes.io/job-name'] === 'slow') seen.add(p.metadata.uid!);
      });
      try {
        await h.client.create(jobPath(ns), job('slow', { activeDeadlineSeconds: 1, parallelism: 2, completions: 2 }));
        await eventually(async () => condition(await getJob(ns, 'slow'), 'Failed')?.reason === 'DeadlineExceeded', 10_000, 'DeadlineExceeded');
        await eventually(async () => (await pods(h.client, ns, 'batch.kubernetes.io/job-name=slow')).every((p) => p.metadata.deletionTimestamp), 5000, 'active pods deleted');
        assert.equal(seen.size, 2, 'both pods had been created');
        assert.equal((await getJob(ns, 'slow')).status?.active, 0);
        assert.equal((await getJob(ns, 'slow')).status?.failed, 2, 'the pods a failing Job stops count as failed');
      } finally {
        slowPods.stop();
      }
    } finally {
      running.stop();
      k.stop();
    }
  });

  it('Indexed: one pod per index with its index, completedIndexes; suspend holds and resume runs; TTL deletes the finished Job', async () => {
    const ns = await h.namespace('job-idx');
    const k = kubelet(ns, () => 'Succeeded');
    const running = startControllers(h.client, [new JobController()]);
    try {
      await h.client.create(jobPath(ns), job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed', suspend: true, ttlSecondsAfterFinished: 0 }));
      await eventually(async () => condition(await getJob(ns, 'idx'), 'Suspended'), 5000, 'Suspended');
      assert.equal((await pods(h.client, ns)).length, 0, 'a suspended Job starts nothing');
      await h.client.patch(jobPath(ns, 'idx'), { spec: { suspend: false } }, 'merge');
      await eventually(async () => (await pods(h.client, ns)).length === 3, 5000, 'three indexed pods');
      const ps = await pods(h.client, ns);
      assert.deepEqual(ps.map((p) => p.metadata.annotations?.['batch.kubernetes.io/job-completion-index']).sort(), ['0', '1', '2']);
      for (const p of ps) {
        const i = p.metadata.annotations?.['batch.kubernetes.io/job-completion-index'];
        assert.match(p.metadata.name!, new RegExp(`^idx-${i}-`));
        assert.equal(p.spec?.hostname, `idx-${i}`);
        assert.ok(p.spec?.containers[0]?.env?.some((e) => e.name === 'JOB_COMPLETION_INDEX'));
      }
      // ttlSecondsAfterFinished: 0 deletes the Job once it is Complete.
      await eventually(async () => {
        try {
          const j = await getJob(ns, 'idx');
          return j.metadata.deletionTimestamp !== undefined;
        } catch (e) {
          return isStatusError(e, 'NotFound');
        }
      }, 10_000, 'Job deleted after its TTL');
    } finally {
      running.stop();
      k.stop();
    }
  });

  it('without completions (a work queue): the first success starts nothing new, running pods finish', async () => {
    const ns = await h.namespace('job-queue');
    let first = true;
    const k = kubelet(ns, () => {
      const outcome = first ? 'Succeeded' : 'Running';
      first = false;
      return outcome;
    });
    const running = startControllers(h.client, [new JobController()]);
    try {
      await h.client.create(jobPath(ns), job('queue', { parallelism: 3 }));
      await eventually(async () => (await getJob(ns, 'queue')).status?.succeeded === 1, 5000, 'one worker done');
      await eventually(async () => (await getJob(ns, 'queue')).status?.active === 2, 5000, 'the other two still active');
      const ps = await pods(h.client, ns);
      assert.equal(ps.length, 3, 'no replacement for the finished worker');
      assert.ok(ps.every((p) => !p.metadata.deletionTimestamp), 'running workers are not deleted');
      assert.equal(condition(await getJob(ns, 'queue'), 'Complete'), undefined);
      for (const p of ps.filter((x) => x.status?.phase === 'Running')) {
        await h.client.patch(`${nsPath(ns, 'pods', p.metadata.name!, 'v1')}/status`, { status: { phase: 'Succeeded' } }, 'merge');
      }
      await eventually(async () => condition(await getJob(ns, 'queue'), 'Complete'), 5000, 'Complete once all finished');
    } finally {
      running.stop();
      k.stop();
    }
  });

  it('validates as upstream: values of the wrong type are 400s, bad numbers and templates 422s, nulls mean unset, the selector is generated', async () => {
    const ns = await h.namespace('job-valid');
    const refused = async (j: Job, reason: 'Invalid' | 'BadRequest', re: RegExp) => {
      const e = await h.client.create(jobPath(ns), j).then(() => undefined, (err: unknown) => err);
      assert.ok(isStatusError(e, reason), `expected ${reason} for ${JSON.stringify(j.spec)}: ${String(e)}`);
      assert.match((e as Error).message, re);
    };
    const invalid = (j: Job, re: RegExp) => refused(j, 'Invalid', re);
    await refused(job('a', { activeDeadlineSeconds: '10m' as unknown as number }), 'BadRequest', /^Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go struct field JobSpec\.spec\.activeDeadlineSeconds of type int64$/);
    await refused({ ...job('b'), spec: { template: 'x' } } as unknown as Job, 'BadRequest', /Go struct field JobSpec\.spec\.template of type v1\.PodTemplateSpec/);
    await invalid(job('a2', { activeDeadlineSeconds: -5 }), /spec.activeDeadlineSeconds/);
    await invalid(job('c', { selector: { matchLabels: { app: 'x' } } }), /`selector` not auto-generated/);
    await invalid(job('d', { template: { spec: { restartPolicy: 'Always', containers: [{ name: 'c', image: 'i' }] } } }), /spec.template.spec.restartPolicy: Unsupported value: "Always"/);
    const ok = await h.client.create<Job>(jobPath(ns), job('e', { activeDeadlineSeconds: null as unknown as number, ttlSecondsAfterFinished: null as unknown as number }));
    assert.equal(ok.spec?.activeDeadlineSeconds, undefined);
    assert.equal(ok.spec?.ttlSecondsAfterFinished, undefined);
  });

  it('Indexed: lowering parallelism deletes the surplus pods, highest indexes first; OnFailure restarts count toward backoffLimit', async () => {
    const ns = await h.namespace('job-more');
    const k = kubelet(ns, () => 'Running');
    const running = startControllers(h.client, [new JobController()]);
    try {
      await h.client.create(jobPath(ns), job('wide', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
      await eventually(async () => (await pods(h.client, ns, 'batch.kubernetes.io/job-name=wide')).length === 3, 5000, 'three indexed pods');
      await h.client.patch(jobPath(ns, 'wide'), { spec: { parallelism: 1 } }, 'merge');
      await eventually(async () => {
        const live = (await pods(h.client, ns, 'batch.kubernetes.io/job-name=wide')).filter((p) => !p.metadata.deletionTimestamp);
        return live.length === 1 && live[0]!.metadata.annotations?.['batch.kubernetes.io/job-completion-index'] === '0';
      }, 5000, 'only index 0 left');

      const restarting = job('restarts', { backoffLimit: 2 });
      restarting.spec!.template!.spec!.restartPolicy = 'OnFailure';
      await h.client.create(jobPath(ns), restarting);
      await eventually(async () => (await pods(h.client, ns, 'batch.kubernetes.io/job-name=restarts')).length === 1, 5000, 'one pod');
      const [p] = await pods(h.client, ns, 'batch.kubernetes.io/job-name=restarts');
      const restarted = (n: number) =>
        h.client.patch(`${nsPath(ns, 'pods', p!.metadata.name!, 'v1')}/status`, { status: { phase: 'Running', containerStatuses: [{ name: 'work', image: 'busybox', ready: true, restartCount: n, state: { running: {} } }] } }, 'merge');
      await restarted(1);
      await eventually(async () => (await getJob(ns, 'restarts')).status?.active === 1, 5000, 'active');
      assert.equal(condition(await getJob(ns, 'restarts'), 'Failed'), undefined, 'one restart is below backoffLimit 2');
      await restarted(2);
      await eventually(async () => condition(await getJob(ns, 'restarts'), 'Failed')?.reason === 'BackoffLimitExceeded', 5000, 'two restarts reach backoffLimit 2');
      assert.equal((await getJob(ns, 'restarts')).status?.failed, 1, 'its restarting pod, stopped, counts as failed');
    } finally {
      running.stop();
      k.stop();
    }
  });

  it('formats index sets as upstream', () => {
    assert.equal(formatIndexes([7, 1, 3, 4, 5]), '1,3-5,7');
    assert.equal(formatIndexes([0, 1]), '0,1');
    assert.equal(formatIndexes([]), '');
  });
});
