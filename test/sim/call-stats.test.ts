import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CallStats, callKind } from '../../src/sim/call-stats.js';

test('calls are named by what a node does with them', () => {
  assert.equal(callKind('PUT', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/sim-1'), 'PUT lease');
  assert.equal(callKind('PATCH', '/api/v1/nodes/sim-1/status'), 'PATCH node status');
  assert.equal(callKind('PATCH', '/api/v1/namespaces/default/pods/web-1/status?fieldManager=x'), 'PATCH pod status');
  assert.equal(callKind('POST', '/api/v1/namespaces/default/events'), 'POST event');
  assert.equal(callKind('GET', '/api/v1/nodes/sim-1'), 'GET node');
});

test('percentiles are exact over every sample since the last reset, and failures are counted', () => {
  const s = new CallStats();
  const url = new URL('https://x/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/a');
  for (let i = 1; i <= 100; i++) s.request('PUT', url, 200, i / 1000);
  s.request('PUT', url, undefined, 2);
  const f = s.figures().calls['PUT lease']!;
  assert.deepEqual([f.count, f.errors, f.p50Ms, f.p99Ms, f.maxMs], [101, 1, 51, 100, 2000]);
  s.reset();
  assert.deepEqual(s.figures().calls, {});
});
