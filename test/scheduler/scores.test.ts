import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulerCache } from '../../src/scheduler/cache.js';
import { Decider, numFeasibleNodesToFind } from '../../src/scheduler/decide.js';
import { podInfoOf } from '../../src/scheduler/pod-info.js';
import { fitErrorMessage, noPreemptionMessage } from '../../src/scheduler/fit-error.js';
import { NodeInfo } from '../../src/scheduler/node-info.js';
import { balancedAllocationScore, leastAllocatedScore, normalize, scoreNodes, selectBest } from '../../src/scheduler/scores.js';
import { makeNode, makePod, type NodeSpecOptions } from './fixtures.js';
import type { Pod } from '../../src/api/kinds/pod.js';

function cacheWith(nodes: [string, NodeSpecOptions?][]): SchedulerCache {
  const cache = new SchedulerCache();
  for (const [name, o] of nodes) cache.setNode(makeNode(name, o));
  return cache;
}

/** Decides and assumes each pod in turn, as the scheduler loop does; returns node → count. */
function placeAll(cache: SchedulerCache, pods: Pod[], decider = new Decider(cache)): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const info = podInfoOf(pod);
    const d = decider.decide(info);
    assert.ok('node' in d, `pod ${pod.metadata.name} should fit`);
    cache.assume(info, d.node.name);
    out.set(d.node.name, (out.get(d.node.name) ?? 0) + 1);
  }
  return out;
}

describe('scheduler scoring', () => {
  it('prefers the least allocated node', () => {
    const a = new NodeInfo('a');
    a.setNode(makeNode('a', { cpu: '4', memory: '8Gi' }));
    a.addPod(podInfoOf(makePod('x', { cpu: '2', memory: '4Gi', nodeName: 'a' })));
    const b = new NodeInfo('b');
    b.setNode(makeNode('b', { cpu: '4', memory: '8Gi' }));
    const pod = podInfoOf(makePod('p', { cpu: '1', memory: '1Gi' }));
    assert.ok(leastAllocatedScore(pod, b) > leastAllocatedScore(pod, a));
    assert.equal(leastAllocatedScore(pod, b), Math.floor((75 + 87) / 2));
    assert.equal(balancedAllocationScore(pod, b), Math.floor((1 - Math.abs(0.25 - 0.125) / 2) * 100));
    const scores = scoreNodes(pod, [a, b], 2, { spreadGroup: undefined, zoned: false });
    assert.equal(selectBest(scores, 2), 1);
  });

  it('normalizes like upstream DefaultNormalizeScore', () => {
    const raw = new Float64Array([0, 1, 2]);
    normalize(raw, 3, true);
    assert.deepEqual([...raw], [100, 50, 0]);
    const zero = new Float64Array([0, 0]);
    normalize(zero, 2, false);
    assert.deepEqual([...zero], [0, 0]);
  });

  it('spreads 6 replicas over 3 equal nodes exactly 2 each', () => {
    for (let run = 0; run < 20; run++) {
      const cache = cacheWith([['n1'], ['n2'], ['n3']]);
      const pods = Array.from({ length: 6 }, (_, i) => makePod(`web-${i}`, { owner: 'web', labels: { app: 'web' } }));
      assert.deepEqual([...placeAll(cache, pods).values()].sort(), [2, 2, 2]);
    }
  });

  it('spreads replicas even when some nodes already run other pods', () => {
    const cache = cacheWith([['n1'], ['n2'], ['n3']]);
    for (let i = 0; i < 3; i++) cache.addOrUpdatePod(makePod(`other-${i}`, { nodeName: 'n1', cpu: '100m', owner: 'other' }));
    const placed = placeAll(cache, Array.from({ length: 6 }, (_, i) => makePod(`web-${i}`, { owner: 'web' })));
    assert.deepEqual([...placed.values()].sort(), [2, 2, 2]);
  });

  it('spreads unowned pods with identical labels', () => {
    const cache = cacheWith([['n1'], ['n2'], ['n3']]);
    const placed = placeAll(cache, Array.from({ length: 3 }, (_, i) => makePod(`job-${i}`, { labels: { app: 'batch' } })));
    assert.deepEqual([...placed.values()].sort(), [1, 1, 1]);
  });

  it('spreads across zones as well as nodes', () => {
    const cache = cacheWith([
      ['a1', { labels: { 'topology.kubernetes.io/zone': 'a' } }],
      ['a2', { labels: { 'topology.kubernetes.io/zone': 'a' } }],
      ['b1', { labels: { 'topology.kubernetes.io/zone': 'b' } }],
      ['b2', { labels: { 'topology.kubernetes.io/zone': 'b' } }],
    ]);
    const placed = placeAll(cache, Array.from({ length: 8 }, (_, i) => makePod(`web-${i}`, { owner: 'web' })));
    assert.deepEqual(Object.fromEntries([...placed].sort()), { a1: 2, a2: 2, b1: 2, b2: 2 });
  });

  it('avoids PreferNoSchedule taints and follows preferred affinity', () => {
    const cache = cacheWith([['soft', { taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] }], ['plain']]);
    for (let i = 0; i < 5; i++) assert.deepEqual([...placeAll(cache, [makePod(`p${i}`)]).keys()], ['plain']);
    const cache2 = cacheWith([['ssd', { labels: { disk: 'ssd' } }], ['hdd']]);
    const pref = makePod('p', {
      affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 50, preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] } }] } },
    });
    assert.deepEqual([...placeAll(cache2, [pref]).keys()], ['ssd']);
  });

  it('samples nodes in big clusters like upstream percentageOfNodesToScore', () => {
    assert.equal(numFeasibleNodesToFind(50, 0), 50);
    assert.equal(numFeasibleNodesToFind(1000, 0), 420);
    assert.equal(numFeasibleNodesToFind(5000, 0), 500);
    assert.equal(numFeasibleNodesToFind(1000, 100), 1000);
    assert.equal(numFeasibleNodesToFind(150, 10), 100);
  });

  it('explains a pod that fits nowhere with upstream wording', () => {
    const cache = cacheWith([['n1', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }], ['n2', { cpu: '1' }], ['n3', { cpu: '1' }]]);
    const d = new Decider(cache).decide(podInfoOf(makePod('big', { cpu: '2' })));
    assert.ok('diagnosis' in d && d.diagnosis);
    assert.equal(
      fitErrorMessage(d.diagnosis, noPreemptionMessage(d.diagnosis)),
      '0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..',
    );
    assert.equal(d.resolvable, true);
    const cordoned = cacheWith([['n1', { unschedulable: true }], ['n2', { unschedulable: true }], ['n3', { unschedulable: true }]]);
    const d2 = new Decider(cordoned).decide(podInfoOf(makePod('p')));
    assert.ok('diagnosis' in d2 && d2.diagnosis);
    assert.equal(fitErrorMessage(d2.diagnosis, noPreemptionMessage(d2.diagnosis)), '0/3 nodes are available: 3 node(s) were unschedulable. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.');
    assert.equal(d2.resolvable, false);
    const none = new Decider(new SchedulerCache()).decide(podInfoOf(makePod('p')));
    assert.ok('diagnosis' in none);
    assert.equal(none.diagnosis, undefined);
  });

  it('keeps decisions cheap at 1,000 nodes', () => {
    const cache = cacheWith(Array.from({ length: 1000 }, (_, i) => [`node-${i}`, { cpu: '32', memory: '64Gi' }] as [string, NodeSpecOptions]));
    const decider = new Decider(cache);
    const pods = Array.from({ length: 2000 }, (_, i) => makePod(`p-${i}`, { owner: `rs-${i % 20}`, cpu: '100m', memory: '128Mi' }));
    const t = performance.now();
    placeAll(cache, pods, decider);
    const perPodMs = (performance.now() - t) / pods.length;
    assert.ok(perPodMs < 2, `a decision took ${perPodMs.toFixed(3)} ms`);
  });
});
