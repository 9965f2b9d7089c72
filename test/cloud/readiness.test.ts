// How the autoscaler counts a registered Node: capacity still starting (which it waits for) or a
// node that failed (which counts against cluster health), as upstream's cluster state registry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Node } from '../../src/api/kinds/node.js';
import { nodeReadiness } from '../../src/cloud/autoscaler/readiness.js';

const T0 = Date.parse('2026-12-02T10:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();
const PROVISION = 900_000;

function node(ready: 'True' | 'False' | 'Unknown' | undefined, changedMs: number, taints: string[] = []): Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'n', creationTimestamp: at(0) },
    spec: { taints: taints.map((key) => ({ key, effect: 'NoSchedule' as const })) },
    status: { conditions: ready ? [{ type: 'Ready', status: ready, lastTransitionTime: at(changedMs) }] : [] },
  } as Node;
}

test('a Ready, initialised node is ready', () => {
  assert.equal(nodeReadiness(node('True', 5_000), T0 + 60_000, PROVISION), 'ready');
});

test('a node that has not yet been Ready since it registered is still starting: upcoming capacity, not a failure', () => {
  assert.equal(nodeReadiness(node(undefined, 0), T0 + 10_000, PROVISION), 'notStarted', 'no Ready condition yet');
  assert.equal(nodeReadiness(node('False', 1_000), T0 + 300_000, PROVISION), 'notStarted', 'NotReady since its first status');
  assert.equal(nodeReadiness(node('True', 1_000, ['node.cloudprovider.kubernetes.io/uninitialized']), T0 + 30_000, PROVISION), 'notStarted', 'the cloud has not initialised it');
});

test('a node that was Ready and stopped is unready at once, however young: it is not capacity on the way', () => {
  assert.equal(nodeReadiness(node('False', 200_000), T0 + 210_000, PROVISION), 'unready');
  assert.equal(nodeReadiness(node('Unknown', 300_000), T0 + 310_000, PROVISION), 'unready');
});

test('a node that never came up within the startup bound is unready', () => {
  assert.equal(nodeReadiness(node('False', 1_000), T0 + PROVISION, PROVISION), 'unready');
  assert.equal(nodeReadiness(node(undefined, 0), T0 + PROVISION + 1, PROVISION), 'unready');
});
