// Built-in scenarios end to end, both modes, nodes leaving and cut off, on real clusters. Split over files so
// each stays well inside the runner's per-file timeout.
import { describe } from 'node:test';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: nodes leaving and cut off', () => {
  scenarioPasses('graceful-shutdown');
  scenarioPasses('retire');
  scenarioPasses('node-partitioned');
});
