import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { workloadRow } from '../../src/dashboard/workload-rows.js';

function obj(spec: Record<string, unknown>, status: Record<string, unknown>, generation = 2): KubeObject {
  return { apiVersion: 'x', kind: 'X', metadata: { name: 'w', namespace: 'ns', generation }, spec, status } as KubeObject;
}

describe('dashboard workload rows', () => {
  it('reads a Deployment rollout as kubectl rollout status does', () => {
    const done = workloadRow('Deployment', obj({ replicas: 3 }, { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 }));
    assert.deepEqual(done, { kind: 'Deployment', namespace: 'ns', name: 'w', desired: 3, ready: 3, state: 'Complete', scalable: true });
    assert.equal(workloadRow('Deployment', obj({ replicas: 3 }, { observedGeneration: 1, replicas: 3, updatedReplicas: 3, availableReplicas: 3 })).state, 'Progressing', 'the controller has not seen the new spec');
    assert.equal(workloadRow('Deployment', obj({ replicas: 3 }, { observedGeneration: 2, replicas: 4, updatedReplicas: 2, availableReplicas: 3 })).state, 'Progressing');
    assert.equal(workloadRow('Deployment', obj({ replicas: 3 }, { observedGeneration: 2, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] })).state, 'Stalled');
    assert.equal(workloadRow('Deployment', obj({}, {})).desired, 1, 'replicas defaults to 1');
  });

  it('reads StatefulSets, DaemonSets and Jobs', () => {
    assert.equal(workloadRow('StatefulSet', obj({ replicas: 2 }, { observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r1' })).state, 'Complete');
    assert.equal(workloadRow('StatefulSet', obj({ replicas: 2 }, { observedGeneration: 2, readyReplicas: 2, updatedReplicas: 2, currentRevision: 'r1', updateRevision: 'r2' })).state, 'Progressing');
    const ds = workloadRow('DaemonSet', obj({}, { observedGeneration: 2, desiredNumberScheduled: 5, numberReady: 4, updatedNumberScheduled: 5, numberAvailable: 4 }));
    assert.deepEqual([ds.desired, ds.ready, ds.state, ds.scalable], [5, 4, 'Progressing', false]);
    assert.equal(workloadRow('Job', obj({ completions: 3 }, { succeeded: 3, conditions: [{ type: 'Complete', status: 'True' }] })).state, 'Complete');
    assert.equal(workloadRow('Job', obj({}, { failed: 6, conditions: [{ type: 'Failed', status: 'True' }] })).state, 'Failed');
    assert.equal(workloadRow('Job', obj({ completions: 3 }, { active: 1, succeeded: 1 })).state, 'Running');
    assert.equal(workloadRow('Job', obj({ suspend: true }, {})).state, 'Suspended');
  });
});
