// Built-in scenarios end to end, the control plane, on real clusters. Split over files so each
// stays well inside the runner's per-file timeout.
import { describe } from 'node:test';
import { scenarioPasses } from '../support/scenario.js';

describe('built-in scenarios: the control plane', () => {
  // Upstream's agents behind a real HAProxy: the endpoint is what saves them.
  scenarioPasses('control-plane-endpoint', 'kubernetes');
  scenarioPasses('api-outage', 'skiff');
});
