// The HPA's replica count for a resource metric, against upstream's replica_calculator rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/kinds/pod.js';
import { DEFAULT_REPLICA_CALCULATOR_OPTIONS as OPTS, MetricComputeError, rawResourceReplicas, resourceReplicas, type PodMetrics } from '../../src/controllers/hpa-replica-calculator.js';
import { rfc3339 } from '../../src/util/time.js';

const NOW = Date.UTC(2026, 0, 1, 12);
const LONG_AGO = NOW - 60 * 60_000;

function pod(name: string, o: { phase?: string; ready?: boolean; started?: number; readySince?: number; request?: string } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', labels: { app: 'web' } },
    spec: { containers: [{ name: 'main', image: 'busybox', resources: o.request === '' ? {} : { requests: { cpu: o.request ?? '1' } } }] },
    status: {
      phase: o.phase ?? 'Running',
      startTime: rfc3339(o.started ?? LONG_AGO),
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: rfc3339(o.readySince ?? LONG_AGO + 10_000) }],
    },
  } as Pod;
}

function metrics(values: Record<string, number>, at = NOW): PodMetrics {
  return new Map(Object.entries(values).map(([name, value]) => [name, { timestamp: at, windowMs: 30_000, value }]));
}

const cpu = (current: number, target: number, pods: Pod[], m: PodMetrics) => resourceReplicas(current, target, 'cpu', pods, m, NOW, NOW, OPTS);

test('within the 0.1 tolerance the count stays', () => {
  const pods = [pod('a'), pod('b'), pod('c')];
  const r = cpu(3, 50, pods, metrics({ a: 540, b: 540, c: 540 }));
  assert.equal(r.replicas, 3);
  assert.equal(r.utilization, 54);
  assert.equal(r.rawUtilization, 540);
});

test('above target: ceil(ratio × ready pods); below: down to what the usage needs', () => {
  const pods = [pod('a'), pod('b'), pod('c')];
  assert.equal(cpu(3, 50, pods, metrics({ a: 1000, b: 1000, c: 1000 })).replicas, 6);
  assert.equal(cpu(3, 50, pods, metrics({ a: 100, b: 100, c: 100 })).replicas, 1);
});

test('missing metrics count as 100 % of their request on the way down and 0 on the way up', () => {
  const four = [pod('a'), pod('b'), pod('c'), pod('d')];
  // Without d: 10 % of request, ratio 0.2. With d at 100 %: (300 + 1000) / 4000 = 32 %, ratio 0.64.
  assert.equal(cpu(4, 50, four, metrics({ a: 100, b: 100, c: 100 })).replicas, 3);
  // Up: 100 % on two pods, ratio 2; the third at 0 gives 66 %, ratio 1.32, ceil(3.96) = 4.
  assert.equal(cpu(3, 50, four.slice(0, 3), metrics({ a: 1000, b: 1000 })).replicas, 4);
});

test('an assumption that reverses the direction keeps the current count', () => {
  // 40 % on one pod (ratio 0.8); the missing pod at 100 % makes 70 %, ratio 1.4: no scale down.
  assert.equal(cpu(2, 50, [pod('a'), pod('b')], metrics({ a: 400 })).replicas, 2);
});

test('pods not yet ready hold back a scale-up at 0 and are left out of a scale-down', () => {
  const pods = [pod('a'), pod('b'), pod('p', { phase: 'Pending' })];
  assert.equal(cpu(3, 50, pods, metrics({ a: 1000, b: 1000 })).replicas, 4);
  assert.equal(cpu(3, 50, pods, metrics({ a: 100, b: 100 })).replicas, 1);
});

test('cpu initialization period: a sample from before a full window since readiness is not trusted', () => {
  const fresh = pod('f', { started: NOW - 60_000, readySince: NOW - 10_000 });
  // f's 1000m is ignored (unready), so a and b decide: 100 % each → 4 with f counted at 0.
  const r = cpu(3, 50, [pod('a'), pod('b'), fresh], metrics({ a: 1000, b: 1000, f: 1000 }));
  assert.equal(r.replicas, 4);
  assert.equal(r.utilization, 100);
  // Once the initialization period is over, a ready pod's metric counts.
  const settled = pod('f', { started: NOW - 6 * 60_000, readySince: NOW - 10_000 });
  assert.equal(cpu(3, 50, [pod('a'), pod('b'), settled], metrics({ a: 1000, b: 1000, f: 1000 })).replicas, 6);
});

test('a pod unready since it started (within the initial readiness delay) does not count', () => {
  const never = pod('n', { ready: false, started: LONG_AGO, readySince: LONG_AGO + 5_000 });
  assert.equal(cpu(2, 50, [pod('a'), never], metrics({ a: 100, n: 1000 })).replicas, 1);
});

test('an AverageValue target compares usage per pod', () => {
  const pods = [pod('a'), pod('b')];
  const r = rawResourceReplicas(2, 500, 'cpu', pods, metrics({ a: 1000, b: 1000 }), NOW, NOW, OPTS);
  assert.deepEqual([r.replicas, r.usage], [4, 1000]);
  assert.equal(rawResourceReplicas(2, 500, 'cpu', pods, metrics({ a: 520, b: 500 }), NOW, NOW, OPTS).replicas, 2);
});

test("errors read as upstream's", () => {
  assert.throws(() => cpu(1, 50, [], metrics({})), new MetricComputeError('no pods returned by selector while calculating replica count'));
  assert.throws(() => cpu(1, 50, [pod('a', { phase: 'Pending' })], metrics({ a: 1 })), new MetricComputeError('did not receive metrics for targeted pods (pods might be unready)'));
  assert.throws(() => cpu(1, 50, [pod('a', { request: '' })], metrics({ a: 1 })), new MetricComputeError('missing request for cpu in container main of Pod a'));
});
