// Built-in scenarios end to end, nodes leaving and cut off, on real clusters. Split over files so
// each stays well inside the runner's per-file timeout.
import { describe } from 'node:test';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: nodes leaving and cut off', () => {
  scenarioPasses('graceful-shutdown', 'kubernetes');
  scenarioPasses('retire', 'both');
  scenarioPasses('node-partitioned', 'skiff');
});
