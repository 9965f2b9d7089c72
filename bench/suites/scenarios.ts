// Suite `scenarios`: how long a person waits for the stories. Wall time of
// `skiff scenario run node-deleted --mode both` and of every built-in scenario in both modes, each
// a real cluster started, faulted, recorded and stopped (speed 10, the default). --quick runs
// node-deleted only. No peer replays these stories; the upstream column is the story's length in
// real time at upstream's timings.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BUILTIN_DIR } from '../../src/cli/scenario.js';
import { runScenario } from '../../src/scenarios/runner.js';
import { parseScenario } from '../../src/scenarios/spec.js';
import type { Suite, SuiteContext, SuiteResult } from '../lib/suite.js';
import { progress, round, type Table } from '../lib/util.js';

export const scenariosSuite: Suite = {
  name: 'scenarios',
  description: 'wall time of the built-in scenarios, both modes, on real local clusters',
  async run(ctx: SuiteContext): Promise<SuiteResult> {
    const names = readdirSync(BUILTIN_DIR).filter((f) => f.endsWith('.yaml')).map((f) => f.slice(0, -5)).sort();
    const chosen = ctx.quick ? ['node-deleted'] : ['node-deleted', ...names.filter((n) => n !== 'node-deleted')];
    const rows: string[][] = [];
    const data: Record<string, unknown> = {};
    let total = 0;
    for (const name of chosen) {
      const spec = parseScenario(readFileSync(join(BUILTIN_DIR, `${name}.yaml`), 'utf8'), name);
      const t = performance.now();
      const passed: string[] = [];
      for (const mode of ['skiff', 'kubernetes'] as const) {
        progress(`scenarios: ${name} (${mode})`);
        const run = await runScenario(spec, { mode, speed: 10, say: () => {} });
        passed.push(`${mode} ${run.passed ? 'passed' : 'FAILED'}`);
      }
      const ms = performance.now() - t;
      total += ms;
      const story = spec.steps.reduce((a, s) => a + (s.kind === 'observe' ? s.ms : s.kind === 'fault' ? (s.forMs ?? 0) : 0), 0);
      rows.push([name, (ms / 1000).toFixed(1), passed.join(', '), `${Math.round((2 * story) / 1000)} s of story`]);
      data[name] = { wallMs: round(ms), passed };
    }
    if (!ctx.quick) rows.push(['all built-in scenarios, both modes', (total / 1000).toFixed(1), '', '']);
    const table: Table = {
      title: 'scenarios: wall time, --mode both, --speed 10 (real clusters on loopback, 2 cores)',
      headers: ['scenario', 'wall (s)', 'verdicts', 'upstream timings'],
      rows,
      notes: ['Each mode starts its own cluster (1 server, or 3 on etcd), waits for every node Ready, plays the story at 10× and stops everything.'],
    };
    return { tables: [table], data: { ...data, totalMs: round(total) } };
  },
};
