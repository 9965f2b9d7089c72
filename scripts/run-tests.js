#!/usr/bin/env node
// Runs every compiled test file with node's test runner. Unit tests first (fast feedback), then
// end-to-end tests, which start real processes and so run one file at a time; the scenario files
// in a second line beside them.
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

const filter = process.argv.slice(2);
let files = find('dist/test');
if (filter.length > 0) files = files.filter((f) => filter.some((x) => f.includes(x)));
const unit = files.filter((f) => !f.includes('/e2e/'));
const e2e = files.filter((f) => f.includes('/e2e/'));
// A test that hangs fails after 5 minutes instead of eating CI's time; a file whose tests are done
// exits even if a stray handle would keep its process alive.
// Each line's per-file durations go to test-artifacts/durations-<line>.txt (scripts/file-durations.js).
const runnerArgs = (list) => [
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/file-durations.js',
  '--test-reporter-destination=/dev/null',
  '--test-concurrency=1',
  '--test-timeout=300000',
  '--test-force-exit',
  ...list,
];
// Objects a server shares with its own read-only informers are frozen under test (and in every
// server the tests start), so code that changes one fails loudly instead of corrupting a cache.
// `skiff up` registers its cluster under $XDG_STATE_HOME and merges a context into $KUBECONFIG (as
// kind does): under test, both land in a directory of this run, never in the user's own files.
const userState = mkdtempSync(join(tmpdir(), 'skiff-test-user-'));
const env = { ...process.env, SKIFF_FREEZE_SHARED: '1', XDG_STATE_HOME: join(userState, 'state'), KUBECONFIG: join(userState, 'kubeconfig') };
process.on('exit', () => rmSync(userState, { recursive: true, force: true }));

// The scenario runs spend most of their wall time waiting out story time (observe windows of a
// small cluster) and judge behaviour, not speed; they run beside the other suites, their output
// kept in a file and printed when they finish, and so do the crash campaign, the rolling upgrade
// and the simulated fleet (outcomes, not timings), which keeps the two lines about even. SKIFF_TEST_SERIAL=1 runs
// everything in one line.
const scenarios = e2e.filter((f) => /\/e2e\/(scenario[^/]*|crash|upgrade|sim)\.test\.js$/.test(f));
const rest = [...unit, ...e2e.filter((f) => !scenarios.includes(f))];
mkdirSync('test-artifacts', { recursive: true });
const durations = (base, line) => ({ ...base, SKIFF_TEST_DURATIONS: join('test-artifacts', `durations-${line}.txt`) });
if (process.env.SKIFF_TEST_SERIAL === '1' || scenarios.length === 0 || rest.length === 0) {
  const r = spawnSync(process.execPath, runnerArgs([...rest, ...scenarios]), { stdio: 'inherit', env: durations(env, 'all') });
  process.exit(r.status ?? 1);
}
const logFile = join('test-artifacts', 'scenario-tests.log');
const out = openSync(logFile, 'w');
console.log(`scenario, crash, upgrade and sim tests (${scenarios.length} files) run alongside; their output: ${logFile}`);
const exited = (child) => new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
let sideDone = false;
const side = exited(spawn(process.execPath, runnerArgs(scenarios), { stdio: ['ignore', out, out], env: durations(env, 'scenarios') })).then((code) => {
  sideDone = true;
  return code;
});
const main = await exited(spawn(process.execPath, runnerArgs(rest), { stdio: 'inherit', env: durations(env, 'main') }));
if (!sideDone) console.log('waiting for the scenario tests …');
const sideCode = await side;
closeSync(out);
// The slowest files of both lines (whole tables in test-artifacts/), ahead of the runners' own summaries.
for (const line of ['main', 'scenarios']) {
  const table = join('test-artifacts', `durations-${line}.txt`);
  if (existsSync(table)) console.log(`\n---- slowest ${line} test files (${table}) ----\n${readFileSync(table, 'utf8').split('\n').slice(0, 11).join('\n')}`);
}
console.log(`\n---- scenario tests (${logFile}) ----`);
process.stdout.write(readFileSync(logFile, 'utf8'));
process.exit(main !== 0 ? main : sideCode);
