// Runs a built-in scenario as a user does (`skiff scenario run`) and asserts each mode it ran passed.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runSkiff } from './cluster.js';

/**
 * One test per scenario. `mode` both where the two modes tell different stories; where a
 * scenario expects the same of both, one mode stands for both here (CI's time) and
 * `npm run bench -- scenarios` runs every scenario in both.
 */
export function scenarioPasses(name: string, mode: 'skiff' | 'kubernetes' | 'both', extra: string[] = []): void {
  it(`${name} (${mode === 'both' ? 'both modes' : `${mode} mode`})`, async () => {
    const r = await runSkiff(['scenario', 'run', name, '--mode', mode, ...extra], { timeoutMs: 280_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr.slice(-3000)}`);
    for (const m of mode === 'both' ? ['skiff', 'kubernetes'] : [mode]) assert.match(r.stdout, new RegExp(`${name} — ${m} mode .*: PASSED`));
  });
}
