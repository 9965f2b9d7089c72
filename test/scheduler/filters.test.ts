import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeInfo, effectiveTaints } from '../../src/scheduler/node-info.js';
import { podInfoOf } from '../../src/scheduler/pod-info.js';
import {
  REASON_NODE_AFFINITY,
  REASON_NODE_PORTS,
  REASON_NODE_UNSCHEDULABLE,
  REASON_TOO_MANY_PODS,
  runFilters,
} from '../../src/scheduler/filters.js';
import { toleratesTaint } from '../../src/api/tolerations.js';
import { affinityPod, makeNode, makePod, type NodeSpecOptions } from './fixtures.js';
import type { Pod } from '../../src/api/kinds/pod.js';

function nodeInfo(name: string, o: NodeSpecOptions = {}, pods: Pod[] = []): NodeInfo {
  const ni = new NodeInfo(name);
  ni.setNode(makeNode(name, o));
  for (const p of pods) ni.addPod(podInfoOf(p));
  return ni;
}

function reasons(pod: Pod, ni: NodeInfo): readonly string[] {
  return runFilters(podInfoOf(pod), ni)?.reasons ?? [];
}

describe('scheduler filters', () => {
  it('matches tolerations to taints as upstream does', () => {
    const taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' as const };
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, taint), true);
    assert.equal(toleratesTaint({ key: 'dedicated', value: 'gpu' }, taint), true, 'empty effect matches every effect; empty operator is Equal');
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Exists' }, taint), true);
    assert.equal(toleratesTaint({ operator: 'Exists' }, taint), true, 'empty key with Exists tolerates everything');
    assert.equal(toleratesTaint({ key: 'dedicated', value: 'cpu' }, taint), false);
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint), false);
    assert.equal(toleratesTaint({ key: 'other', operator: 'Exists' }, taint), false);
    // An operator upstream does not know tolerates nothing, even with a matching value.
    assert.equal(toleratesTaint({ key: 'dedicated', operator: 'Equals' as never, value: 'gpu' }, taint), false);
  });

  it('rejects untolerated NoSchedule and NoExecute taints, ignores PreferNoSchedule', () => {
    const ni = nodeInfo('n1', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    assert.deepEqual(reasons(makePod('p'), ni), ['node(s) had untolerated taint {dedicated: gpu}']);
    assert.equal(runFilters(podInfoOf(makePod('p')), ni)?.unresolvable, true);
    assert.deepEqual(reasons(makePod('p', { tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), ni), []);
    const exec = nodeInfo('n2', { taints: [{ key: 'evict', effect: 'NoExecute' }] });
    assert.deepEqual(reasons(makePod('p'), exec), ['node(s) had untolerated taint {evict: }']);
    const soft = nodeInfo('n3', { taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] });
    assert.deepEqual(reasons(makePod('p'), soft), []);
  });

  it('skips cordoned nodes unless the pod tolerates the unschedulable taint', () => {
    const ni = nodeInfo('n1', { unschedulable: true });
    assert.deepEqual(reasons(makePod('p'), ni), [REASON_NODE_UNSCHEDULABLE]);
    const tolerant = makePod('ds', { tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] });
    assert.deepEqual(reasons(tolerant, ni), []);
  });

  it('treats a node that is not Ready as tainted not-ready/unreachable', () => {
    assert.deepEqual(reasons(makePod('p'), nodeInfo('n1', { ready: 'False' })), ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
    assert.deepEqual(reasons(makePod('p'), nodeInfo('n1', { ready: 'missing' })), ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }']);
    assert.deepEqual(reasons(makePod('p'), nodeInfo('n1', { ready: 'Unknown' })), ['node(s) had untolerated taint {node.kubernetes.io/unreachable: }']);
    // A pod that tolerates everything (a CNI DaemonSet) may still go there.
    assert.deepEqual(reasons(makePod('cni', { tolerations: [{ operator: 'Exists' }] }), nodeInfo('n1', { ready: 'False' })), []);
    // The lifecycle controller's own taint is not doubled.
    const tainted = makeNode('n1', { ready: 'False', taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    assert.equal(effectiveTaints(tainted).length, 1);
  });

  it('applies nodeSelector', () => {
    const ni = nodeInfo('n1', { labels: { disk: 'ssd' } });
    assert.deepEqual(reasons(makePod('p', { nodeSelector: { disk: 'ssd' } }), ni), []);
    assert.deepEqual(reasons(makePod('p', { nodeSelector: { disk: 'hdd' } }), ni), [REASON_NODE_AFFINITY]);
    assert.deepEqual(reasons(makePod('p', { nodeSelector: { zone: 'a' } }), ni), [REASON_NODE_AFFINITY]);
  });

  it('applies required node affinity operators', () => {
    const ni = nodeInfo('n1', { labels: { tier: 'web', gen: '5' } });
    const fits = (p: Pod) => reasons(p, ni).length === 0;
    assert.equal(fits(affinityPod('p', 'tier', 'In', ['web', 'api'])), true);
    assert.equal(fits(affinityPod('p', 'tier', 'In', ['db'])), false);
    assert.equal(fits(affinityPod('p', 'tier', 'NotIn', ['db'])), true);
    assert.equal(fits(affinityPod('p', 'tier', 'NotIn', ['web'])), false);
    assert.equal(fits(affinityPod('p', 'missing', 'NotIn', ['x'])), true, 'NotIn matches an absent label');
    assert.equal(fits(affinityPod('p', 'tier', 'Exists')), true);
    assert.equal(fits(affinityPod('p', 'missing', 'Exists')), false);
    assert.equal(fits(affinityPod('p', 'missing', 'DoesNotExist')), true);
    assert.equal(fits(affinityPod('p', 'tier', 'DoesNotExist')), false);
    assert.equal(fits(affinityPod('p', 'gen', 'Gt', ['4'])), true);
    assert.equal(fits(affinityPod('p', 'gen', 'Gt', ['5'])), false);
    assert.equal(fits(affinityPod('p', 'gen', 'Lt', ['6'])), true);
    assert.equal(fits(affinityPod('p', 'gen', 'Lt', ['5'])), false);
    assert.equal(fits(affinityPod('p', 'tier', 'Gt', ['1'])), false, 'a non-integer label never satisfies Gt');
    assert.equal(fits(affinityPod('p', 'gen', 'Gt', ['x'])), false, 'a malformed term matches nothing');
    // Terms are ORed; matchFields on metadata.name.
    const orPod = makePod('p', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }] }, { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
          },
        },
      },
    });
    assert.equal(fits(orPod), true);
    const emptyTerm = makePod('p', { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{}] } } } });
    assert.equal(fits(emptyTerm), false, 'an empty term matches nothing');
  });

  it('checks resource requests against what is left, listing every shortage', () => {
    const busy = makePod('busy', { cpu: '3', memory: '1Gi', nodeName: 'n1' });
    const ni = nodeInfo('n1', { cpu: '4', memory: '2Gi' }, [busy]);
    assert.deepEqual(reasons(makePod('p', { cpu: '1', memory: '1Gi' }), ni), []);
    assert.deepEqual(reasons(makePod('p', { cpu: '1500m' }), ni), ['Insufficient cpu']);
    assert.deepEqual(reasons(makePod('p', { cpu: '2', memory: '2Gi' }), ni), ['Insufficient cpu', 'Insufficient memory']);
    assert.equal(runFilters(podInfoOf(makePod('p', { cpu: '2' })), ni)?.unresolvable, false);
    // Extended resources: a node without them has none.
    const gpuPod = makePod('p', { containers: [{ name: 'c', resources: { requests: { 'example.com/gpu': '1' }, limits: { 'example.com/gpu': '1' } } }] });
    assert.deepEqual(reasons(gpuPod, ni), ['Insufficient example.com/gpu']);
    assert.deepEqual(reasons(gpuPod, nodeInfo('g', { extra: { 'example.com/gpu': '2' } })), []);
  });

  it('limits the number of pods by allocatable pods', () => {
    const ni = nodeInfo('n1', { pods: '2' }, [makePod('a', { nodeName: 'n1' }), makePod('b', { nodeName: 'n1' })]);
    assert.deepEqual(reasons(makePod('p'), ni), [REASON_TOO_MANY_PODS]);
    assert.deepEqual(reasons(makePod('p', { cpu: '100' }), ni), [REASON_TOO_MANY_PODS, 'Insufficient cpu']);
    ni.removePod([...ni.pods.keys()][0]!);
    assert.deepEqual(reasons(makePod('p'), ni), []);
  });

  it('refuses conflicting host ports', () => {
    const ni = nodeInfo('n1', {}, [makePod('web', { hostPort: 80, nodeName: 'n1' })]);
    assert.deepEqual(reasons(makePod('p', { hostPort: 80 }), ni), [REASON_NODE_PORTS]);
    assert.deepEqual(reasons(makePod('p', { hostPort: 81 }), ni), []);
  });

  it('runs filters in upstream order: the first failing one gives the reason', () => {
    const ni = nodeInfo('n1', { unschedulable: true, taints: [{ key: 'a', effect: 'NoSchedule' }], cpu: '1' });
    assert.deepEqual(reasons(makePod('p', { cpu: '2', nodeSelector: { x: 'y' } }), ni), [REASON_NODE_UNSCHEDULABLE]);
    const tainted = nodeInfo('n2', { taints: [{ key: 'a', effect: 'NoSchedule' }], cpu: '1' });
    assert.deepEqual(reasons(makePod('p', { cpu: '2', nodeSelector: { x: 'y' } }), tainted), ['node(s) had untolerated taint {a: }']);
  });
});
