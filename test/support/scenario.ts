// Runs a built-in scenario as a user does (`skiff scenario run NAME --mode both`) and asserts that
// both modes passed: in kubernetes mode the expectation is upstream's behaviour, asserted.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runSkiff } from './cluster.js';

export function scenarioPasses(name: string, extra: string[] = []): void {
  it(name, async () => {
    const r = await runSkiff(['scenario', 'run', name, '--mode', 'both', ...extra], { timeoutMs: 280_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    for (const m of ['skiff', 'kubernetes']) assert.match(r.stdout, new RegExp(`${name} — ${m} mode .*: PASSED`));
  });
}
