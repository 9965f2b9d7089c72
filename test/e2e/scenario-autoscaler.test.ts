// The autoscaler-zombie scenario end to end, on a local cloud with the cluster autoscaler: upstream
// leaves a machine running without its Node and buys another; skiff restores the Node and buys
// nothing. At --speed 20, so both modes fit well inside the runner's per-file timeout.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { processesMentioning } from '../support/cluster.js';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: the autoscaler', () => {
  scenarioPasses('autoscaler-zombie', ['--speed', '20']);

  it('leaves no machine running once the scenario is over (its autoscaler cannot replace them while they go)', () => {
    assert.deepEqual(processesMentioning('skiff-scenario-autoscaler-zombie-'), []);
  });
});
