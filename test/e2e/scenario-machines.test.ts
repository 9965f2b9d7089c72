// Built-in scenarios end to end, machines: each passes its expectations in both modes on real
// clusters. Split over files so each stays well inside the runner's per-file timeout.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runSkiff } from '../support/cluster.js';

describe('built-in scenarios pass in both modes: machines', () => {
  for (const name of ['machine-lost', 'machine-frozen']) {
    it(name, async () => {
      const r = await runSkiff(['scenario', 'run', name, '--mode', 'both'], { timeoutMs: 240_000 });
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
      assert.match(r.stdout, new RegExp(`${name} — skiff mode .*: PASSED`));
      assert.match(r.stdout, new RegExp(`${name} — kubernetes mode .*: PASSED`));
    });
  }
});
