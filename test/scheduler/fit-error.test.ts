import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Diagnosis, fitErrorMessage, noPreemptionMessage } from '../../src/scheduler/fit-error.js';

describe('FitError message', () => {
  it('counts reasons per node, sorted as upstream sorts the strings', () => {
    const d = new Diagnosis();
    d.numAllNodes = 5;
    d.add({ reasons: ['Insufficient memory'], unresolvable: false });
    d.add({ reasons: ['Insufficient cpu', 'Insufficient memory'], unresolvable: false });
    d.add({ reasons: ['Insufficient memory'], unresolvable: false });
    d.add({ reasons: ['node(s) had untolerated taint {dedicated: gpu}'], unresolvable: true });
    d.add({ reasons: ['node(s) were unschedulable'], unresolvable: true });
    assert.equal(
      fitErrorMessage(d, noPreemptionMessage(d)),
      '0/5 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) were unschedulable, 3 Insufficient memory. ' +
        'preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod..',
    );
  });

  it('says when the pod may not preempt', () => {
    const d = new Diagnosis();
    d.numAllNodes = 1;
    d.add({ reasons: ['Insufficient cpu'], unresolvable: false });
    assert.equal(fitErrorMessage(d, 'preemption: not eligible due to preemptionPolicy=Never.'), '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.');
  });
});
