// Built-in scenarios end to end, both modes, machines lost and frozen, on real clusters. Split over files so
// each stays well inside the runner's per-file timeout.
import { describe } from 'node:test';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: machines', () => {
  scenarioPasses('machine-lost');
  scenarioPasses('machine-frozen');
});
