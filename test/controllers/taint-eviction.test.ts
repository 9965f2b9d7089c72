import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Taint } from '../../src/api/kinds/node.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import { NodeLifecycleController } from '../../src/controllers/node-lifecycle.js';
import { TaintEvictionController, evictionDeadline } from '../../src/controllers/taint-eviction.js';
import { FakeClock, systemClock } from '../../src/util/clock.js';
import { addNode, addPod, advanceUntil, events, getPod, harness, renewLease, rfc, until, type Harness } from './node-lifecycle-harness.js';

const DEAD: Taint = { key: 'example.com/dead', effect: 'NoExecute' };

function evicted(p: Pod | undefined): boolean {
  return !p || (!!p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.reason === 'DeletionByTaintManager') === true);
}

async function taint(h: Harness, node: string, taints: Taint[]): Promise<void> {
  await h.client.patch(`/api/v1/nodes/${node}`, { spec: { taints: taints.map((t) => ({ ...t, timeAdded: rfc(h.clock.now()) })) } }, 'merge');
}

describe('taint eviction controller', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('evicts at once without a toleration, after tolerationSeconds with one, never when tolerated forever', async () => {
    h = await harness({ clock: systemClock });
    const hh = h;
    await addNode(hh.client, hh.clock, 'n1');
    await addPod(hh.client, 'default', 'none', { nodeName: 'n1' });
    await addPod(hh.client, 'default', 'two', { nodeName: 'n1', tolerations: [{ key: DEAD.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 2 }] });
    await addPod(hh.client, 'default', 'forever', { nodeName: 'n1', tolerations: [{ key: DEAD.key, operator: 'Exists', effect: 'NoExecute' }] });
    hh.start(new TaintEvictionController());
    // Wait for whole seconds so timeAdded (second precision) is exact.
    await until(() => Date.now() % 1000 < 100, 'a second boundary', 2000);
    const taintedAt = Date.now();
    await taint(hh, 'n1', [DEAD]);

    await until(async () => evicted(await getPod(hh.client, 'default', 'none')), 'untolerating pod evicted', 3000);
    assert.ok(Date.now() - taintedAt < 1500, 'evicted at once');
    assert.equal((await getPod(hh.client, 'default', 'two'))?.metadata.deletionTimestamp, undefined);
    await until(async () => evicted(await getPod(hh.client, 'default', 'two')), '2 s pod evicted', 5000);
    const after = Date.now() - taintedAt;
    assert.ok(after >= 1800 && after < 5000, `2 s toleration evicted after ${after} ms`);
    const forever = await getPod(hh.client, 'default', 'forever');
    assert.equal(forever?.metadata.deletionTimestamp, undefined);
    await until(async () => (await events(hh.client, 'TaintManagerEviction')).some((e) => e.message === 'Marking for deletion Pod default/two'), 'eviction event');
  });

  it('keeps a pod whose taint goes away before its deadline', async () => {
    h = await harness({ clock: systemClock });
    const hh = h;
    await addNode(hh.client, hh.clock, 'n2');
    const tolerate = (seconds: number) => [{ key: DEAD.key, operator: 'Exists' as const, effect: 'NoExecute' as const, tolerationSeconds: seconds }];
    await addPod(hh.client, 'default', 'kept', { nodeName: 'n2', tolerations: tolerate(2) });
    // Evicted at once: once it is, the controller has looked at every pod on n2.
    await addPod(hh.client, 'default', 'canary', { nodeName: 'n2' });
    hh.start(new TaintEvictionController());
    await taint(hh, 'n2', [DEAD]);
    await until(async () => evicted(await getPod(hh.client, 'default', 'canary')), 'canary evicted', 3000);
    await hh.client.patch('/api/v1/nodes/n2', { spec: { taints: null } }, 'merge');
    await until(async () => (await events(hh.client, 'TaintManagerEviction')).some((e) => e.message === 'Cancelling deletion of Pod default/kept'), 'cancel event');
    // A sentinel tainted now with a longer toleration is evicted after `kept` would have been.
    await addNode(hh.client, hh.clock, 'n3');
    await addPod(hh.client, 'default', 'sentinel', { nodeName: 'n3', tolerations: tolerate(3) });
    await taint(hh, 'n3', [DEAD]);
    await until(async () => evicted(await getPod(hh.client, 'default', 'sentinel')), 'sentinel evicted', 6000);
    assert.equal((await getPod(hh.client, 'default', 'kept'))?.metadata.deletionTimestamp, undefined);
  });

  it('with the node lifecycle controller: a dead node loses its Deployment pods after their toleration and keeps its DaemonSet pod', async () => {
    const clock = new FakeClock(Date.now());
    h = await harness({
      clock,
      server: { admission: { defaultNotReadyTolerationSeconds: 3, defaultUnreachableTolerationSeconds: 3 } },
      options: { nodeMonitorPeriodMs: 1000, nodeMonitorGracePeriodMs: 5000, nodeEvictionRate: 100 },
    });
    const hh = h;
    for (const n of ['a', 'b', 'c']) await addNode(hh.client, clock, n);
    await addPod(hh.client, 'default', 'web', { nodeName: 'a' });
    const web = await getPod(hh.client, 'default', 'web');
    assert.deepEqual(
      web?.spec?.tolerations?.map((t) => `${t.key}:${t.tolerationSeconds}`),
      ['node.kubernetes.io/not-ready:3', 'node.kubernetes.io/unreachable:3'],
      'DefaultTolerationSeconds admission',
    );
    // As the DaemonSet controller adds them: tolerate not-ready/unreachable forever.
    await addPod(hh.client, 'default', 'ds', {
      nodeName: 'a',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
      ],
    });
    hh.start(new NodeLifecycleController(), new TaintEvictionController());
    const heartbeat = async () => {
      for (const n of ['b', 'c']) await renewLease(hh.client, clock, n);
    };
    let taintedAt = 0;
    await advanceUntil(
      clock,
      async () => {
        const node = await hh.client.get<{ spec?: { taints?: Taint[] } }>('/api/v1/nodes/a');
        const t = node.spec?.taints?.find((x) => x.key === 'node.kubernetes.io/unreachable' && x.effect === 'NoExecute');
        if (t && !taintedAt) taintedAt = clock.now();
        return evicted(await getPod(hh.client, 'default', 'web'));
      },
      { stepMs: 250, maxFakeMs: 20_000, each: heartbeat, what: 'web evicted' },
    );
    const waited = clock.now() - taintedAt;
    assert.ok(taintedAt > 0 && waited >= 2000 && waited <= 4500, `evicted ${waited} ms (fake) after the unreachable taint`);
    const ds = await getPod(hh.client, 'default', 'ds');
    assert.equal(ds?.metadata.deletionTimestamp, undefined, 'DaemonSet pod kept');
  });
});

describe('eviction deadlines', () => {
  const now = 1_000_000;
  const t = (key: string, start: number): Taint & { start: number } => ({ key, effect: 'NoExecute', start });
  const startOf = (x: Taint) => (x as Taint & { start: number }).start;

  it('follows upstream rules', () => {
    assert.equal(evictionDeadline([], [t('a', now)], startOf, now), now);
    assert.equal(evictionDeadline([{ operator: 'Exists' }], [t('a', now)], startOf, now), 'never');
    assert.equal(evictionDeadline([{ key: 'a', operator: 'Exists', tolerationSeconds: 5 }], [t('a', now - 1000)], startOf, now), now + 4000);
    assert.equal(evictionDeadline([{ key: 'a', operator: 'Exists', tolerationSeconds: -1 }], [t('a', now)], startOf, now), now);
    // The earliest deadline among the taints wins; one untolerated taint evicts at once.
    assert.equal(
      evictionDeadline([{ key: 'a', operator: 'Exists', tolerationSeconds: 5 }, { key: 'b', operator: 'Exists', tolerationSeconds: 2 }], [t('a', now), t('b', now)], startOf, now),
      now + 2000,
    );
    assert.equal(evictionDeadline([{ key: 'a', operator: 'Exists' }], [t('a', now), t('b', now)], startOf, now), now);
    // Equal (the default operator) needs the value to match; a wrong effect does not tolerate.
    assert.equal(evictionDeadline([{ key: 'a', value: 'x' }], [{ key: 'a', value: 'y', effect: 'NoExecute' }], () => now, now), now);
    assert.equal(evictionDeadline([{ key: 'a', operator: 'Exists', effect: 'NoSchedule' }], [t('a', now)], startOf, now), now);
  });
});
