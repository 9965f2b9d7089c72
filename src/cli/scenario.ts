// `skiff scenario list | run NAME|FILE.yaml`: replays a failure story on a real local cluster, in
// skiff's behaviour, upstream's, or both one after the other, and reports what happened: a verdict
// table on the terminal, and on request a self-contained HTML report and the JSON timeline.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { renderReport } from '../scenarios/report.js';
import { runScenario } from '../scenarios/runner.js';
import { parseScenario, ScenarioError, type ScenarioSpec } from '../scenarios/spec.js';
import type { Mode, ScenarioReport, ScenarioRun } from '../scenarios/timeline.js';

/** Where the built-in scenarios are shipped (the package's scenarios/ folder). */
export const BUILTIN_DIR = fileURLToPath(new URL('../../../scenarios/', import.meta.url));

function builtins(): { name: string; file: string }[] {
  if (!existsSync(BUILTIN_DIR)) return [];
  return readdirSync(BUILTIN_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => ({ name: f.slice(0, -'.yaml'.length), file: join(BUILTIN_DIR, f) }));
}

/** A built-in scenario by name, or a file a user wrote. */
export function loadScenario(nameOrFile: string): ScenarioSpec {
  const builtin = builtins().find((b) => b.name === nameOrFile);
  const file = builtin?.file ?? resolve(nameOrFile);
  if (!existsSync(file)) throw new ScenarioError(`no scenario ${nameOrFile}: not a built-in one (skiff scenario list) and no such file`);
  return parseScenario(readFileSync(file, 'utf8'), builtin ? `${builtin.name}.yaml` : nameOrFile);
}

function speedArg(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 1 || n > 100) throw new InvalidArgumentError('use a factor from 1 (upstream timings) to 100');
  return n;
}

/** The verdict table for the terminal: one block per mode. */
export function verdictTable(runs: ScenarioRun[]): string {
  const lines: string[] = [];
  for (const r of runs) {
    lines.push(`${r.scenario} — ${r.mode} mode (speed ${r.speed}×, ${(r.durationMs / 1000).toFixed(1)} s): ${r.passed ? 'PASSED' : 'FAILED'}`);
    if (r.error) lines.push(`  run failed: ${r.error}`);
    const width = Math.max(11, ...r.verdicts.map((v) => v.expectation.length));
    if (r.verdicts.length > 0) lines.push(`  ${'expectation'.padEnd(width)}  ${'measured'.padEnd(28)}  verdict`);
    for (const v of r.verdicts) lines.push(`  ${v.expectation.padEnd(width)}  ${v.measured.padEnd(28)}  ${v.passed ? 'ok' : 'FAILED'}`);
    lines.push('');
  }
  return lines.join('\n');
}

export function scenarioCommand(): Command {
  const cmd = new Command('scenario').description('replay a failure story on a real local cluster, as skiff and as upstream Kubernetes behave, with a timeline report');
  cmd
    .command('list')
    .description('the built-in scenarios (files you can copy and edit)')
    .action(() => {
      for (const b of builtins()) {
        const spec = parseScenario(readFileSync(b.file, 'utf8'), b.file);
        console.log(`${b.name.padEnd(28)} ${spec.description.split(/(?<=\.)\s/)[0] ?? ''}`);
      }
      console.log(`\nfiles: ${BUILTIN_DIR}`);
    });
  cmd
    .command('run')
    .description('run a scenario: a built-in one by name, or a YAML file')
    .argument('<scenario>', 'name (skiff scenario list) or FILE.yaml')
    .addOption(new Option('--mode <mode>', 'skiff (its defaults), kubernetes (agents behave as upstream kubelets: no re-registration, one server address) or both').choices(['skiff', 'kubernetes', 'both']).default('both'))
    .option('--speed <factor>', 'divide every upstream timing, and the story, by this', speedArg, 10)
    .option('--report <file.html>', 'write a self-contained HTML report with the timelines')
    .option('--json <file>', 'write the timelines and verdicts as JSON')
    .option('--keep', 'keep the clusters\' data and logs (always kept for a failed run)', false)
    .action(async (name: string, o: { mode: Mode | 'both'; speed: number; report?: string; json?: string; keep: boolean }) => {
      let spec: ScenarioSpec;
      try {
        spec = loadScenario(name);
      } catch (e) {
        console.error(`skiff scenario: ${(e as Error).message}`);
        process.exit(2);
      }
      const modes: Mode[] = o.mode === 'both' ? ['skiff', 'kubernetes'] : [o.mode];
      const abort = new AbortController();
      const interrupt = () => {
        console.error('interrupted: stopping what the scenario started…');
        abort.abort();
      };
      process.once('SIGINT', interrupt);
      process.once('SIGTERM', interrupt);
      const runs: ScenarioRun[] = [];
      for (const mode of modes) {
        if (abort.signal.aborted) break;
        runs.push(await runScenario(spec, { mode, speed: o.speed, say: (m) => console.error(m), signal: abort.signal, keep: o.keep }));
      }
      const report: ScenarioReport = { scenario: spec.name, description: spec.description, runs };
      console.log(`\n${verdictTable(runs)}`);
      if (o.json) writeFileSync(o.json, `${JSON.stringify(report, null, 2)}\n`);
      if (o.report) {
        writeFileSync(o.report, renderReport(report));
        console.log(`report: ${resolve(o.report)}`);
      }
      process.exitCode = runs.length === modes.length && runs.every((r) => r.passed) ? 0 : 1;
    });
  return cmd;
}
