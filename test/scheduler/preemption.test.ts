// Preemption's choices: the fewest, least important victims on a node, budgets respected where
// possible, and upstream's order of criteria between nodes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SchedulerCache } from '../../src/scheduler/cache.js';
import { podInfoOf } from '../../src/scheduler/pod-info.js';
import { findPreemption, NOT_ELIGIBLE_NEVER, NOT_ELIGIBLE_TERMINATING, type BudgetView } from '../../src/scheduler/preemption.js';
import { Decider } from '../../src/scheduler/decide.js';
import { makeNode, makePod } from './fixtures.js';

function cluster(nodes: Record<string, { cpu: string; pods: { name: string; cpu: string; priority: number; labels?: Record<string, string> }[] }>): SchedulerCache {
  const cache = new SchedulerCache();
  for (const [node, o] of Object.entries(nodes)) {
    cache.setNode(makeNode(node, { cpu: o.cpu }));
    for (const p of o.pods) cache.addOrUpdatePod(makePod(p.name, { cpu: p.cpu, priority: p.priority, nodeName: node, ...(p.labels ? { labels: p.labels } : {}) }));
  }
  return cache;
}

const names = (r: ReturnType<typeof findPreemption>) => ('node' in r ? [r.node.name, r.victims.map((v) => v.pod.metadata.name).join(',')] : r);

describe('preemption', () => {
  it('evicts only as much as the pod needs, the least important first', () => {
    const cache = cluster({ n1: { cpu: '4', pods: [{ name: 'a', cpu: '1', priority: 10 }, { name: 'b', cpu: '1', priority: 5 }, { name: 'c', cpu: '2', priority: 1 }] } });
    const pod = podInfoOf(makePod('urgent', { cpu: '2', priority: 100 }));
    assert.deepEqual(names(findPreemption(pod, cache.nodeList(), [], undefined)), ['n1', 'c']);
  });

  it('never evicts pods of equal or higher priority, and says when nothing would help', () => {
    const cache = cluster({ n1: { cpu: '2', pods: [{ name: 'a', cpu: '2', priority: 100 }] } });
    assert.deepEqual(findPreemption(podInfoOf(makePod('p', { cpu: '1', priority: 100 })), cache.nodeList(), [], undefined), { noCandidates: true });
    const never = podInfoOf({ ...makePod('q', { cpu: '1', priority: 1000 }), spec: { ...makePod('q', { cpu: '1', priority: 1000 }).spec!, preemptionPolicy: 'Never' } as never });
    assert.deepEqual(findPreemption(never, cache.nodeList(), [], undefined), { notEligible: NOT_ELIGIBLE_NEVER });
  });

  it('prefers the node whose victims break no PodDisruptionBudget, then the one with the least important victims', () => {
    const cache = cluster({
      n1: { cpu: '2', pods: [{ name: 'guarded', cpu: '2', priority: 1, labels: { app: 'db' } }] },
      n2: { cpu: '2', pods: [{ name: 'mid', cpu: '2', priority: 50 }] },
      n3: { cpu: '2', pods: [{ name: 'x', cpu: '1', priority: 40 }, { name: 'y', cpu: '1', priority: 40 }] },
    });
    const budget: BudgetView = { namespace: 'default', selector: { matchLabels: { app: 'db' } }, disruptionsAllowed: 0, disrupted: new Set() };
    const pod = podInfoOf(makePod('urgent', { cpu: '2', priority: 100 }));
    // n1 breaks the budget; n3's highest victim (40) ranks below n2's (50).
    assert.deepEqual(names(findPreemption(pod, cache.nodeList(), [budget], undefined)), ['n3', 'x,y']);
    // Without the budget, n1's lone victim of priority 1 is the cheapest.
    assert.deepEqual(names(findPreemption(pod, cache.nodeList(), [], undefined)), ['n1', 'guarded']);
  });

  it('waits for victims already going rather than evicting more', () => {
    const cache = cluster({ n1: { cpu: '2', pods: [{ name: 'a', cpu: '1', priority: 1 }, { name: 'b', cpu: '1', priority: 1 }] } });
    const leaving = makePod('a', { cpu: '1', priority: 1, nodeName: 'n1' });
    leaving.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    cache.addOrUpdatePod(leaving);
    const pod = podInfoOf(makePod('urgent', { cpu: '1', priority: 100 }));
    assert.deepEqual(findPreemption(pod, cache.nodeList(), [], cache.getNode('n1')), { notEligible: NOT_ELIGIBLE_TERMINATING });
  });

  it('keeps a node\'s room for the pod nominated there against pods of lower priority only', () => {
    const cache = cluster({ n1: { cpu: '2', pods: [{ name: 'a', cpu: '1', priority: 1 }] } });
    const decider = new Decider(cache);
    const nominated = podInfoOf(makePod('nominated', { cpu: '1', priority: 100 }));
    decider.nominate(nominated, 'n1');
    assert.ok('diagnosis' in decider.decide(podInfoOf(makePod('lower', { cpu: '1', priority: 10 }))), 'a lower-priority pod does not take the nominated room');
    assert.ok('node' in decider.decide(podInfoOf(makePod('higher', { cpu: '1', priority: 1000 }))), 'a higher-priority pod may');
    decider.nominate(nominated, undefined);
    assert.ok('node' in decider.decide(podInfoOf(makePod('lower', { cpu: '1', priority: 10 }))), 'the room is free once the nomination goes');
  });
});
