// Built-in scenarios end to end, both modes, the control plane, on real clusters. Split over files so each
// stays well inside the runner's per-file timeout.
import { describe } from 'node:test';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: the control plane', () => {
  scenarioPasses('control-plane-endpoint');
  scenarioPasses('api-outage');
});
