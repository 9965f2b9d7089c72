#!/usr/bin/env node
// Runs every compiled test file with node's test runner, several files at a time.
//
// The unit tests run in two processes, one file after another in each. The end-to-end files
// start real processes and mostly wait on them (timers, polls), so several run side by side, one
// process per file, in SKIFF_TEST_LANES lanes (3 by default; SKIFF_TEST_SERIAL=1 runs one at a
// time), the longest first. Two groups run one file at a time each, as the two lines before them
// did: the files that use something machine-wide (`skiff up` with its default ports, containerd
// and its bridges, host-process pods, HAProxy, Chromium, install layouts; crash, upgrade and sim
// with them), and the scenario files, which also keep at most one other job beside them (their
// stories run at 20x speed and judge timing). Every other file starts only its own servers, on
// loopback ports chosen free, and runs beside anything. A file not listed below counts as
// machine-wide: a new file is safe by default, and faster once listed.
//
// Each file's output goes to test-artifacts/logs/<file>.log; a line per file says how it went, a
// failing file's log is printed in full, and test-artifacts/durations.txt lists the jobs, slowest
// first.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { spawn } from 'node:child_process';

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

/** End-to-end files that start only their own processes, on ports chosen free: they may run beside any other. */
const SELF_CONTAINED = new Set([
  'horizontal-pod-autoscaler', 'horizontal-pod-autoscaler-load',
  'admission-webhooks', 'agent-outage', 'aggregation', 'bad-input', 'client-node', 'control-plane-node', 'controllers', 'conversion-webhook', 'crd', 'durability', 'flood', 'fuzz',
  'audit', 'hostile-connections', 'kubectl', 'manifests-corpus', 'pod-security', 'preemption', 'priority-limits', 'python-client', 'rbac', 'resource-quota', 'security', 'server-flags',
  'local-path', 'restore-layout', 'storage-faults', 'storage-networking-kinds', 'user-errors-and-logs', 'certificates', 'resource-metrics',
]);
/** The scenario files: one at a time, beside the machine-wide group and the self-contained files. */
const STORY = new Set(['scenario', 'scenario-autoscaler', 'scenario-control-plane', 'scenario-leaving', 'scenario-machines']);
/** Rough seconds per file (from test-artifacts/durations.txt), to start the longest first; others count 10. */
const EXPECTED_SECONDS = {
  'scenario-autoscaler': 188, 'scenario-machines': 163, scenario: 154, crash: 143, 'scenario-leaving': 137, 'scenario-control-plane': 110,
  containerd: 107, 'containerd-volumes': 56, sim: 97, 'cluster-lifecycle': 80, ha: 91, autoscaler: 89, agent: 76, 'manifests-corpus': 75, fuzz: 64, upgrade: 61, 'up-containerd': 48, 'ha-up': 47, 'ha-convert': 180, 'ha-endpoint': 120,
  'resource-metrics-containerd': 61, crd: 43, dashboard: 41, controllers: 41, install: 39, backup: 36, kubectl: 35, flood: 31, cloud: 27,
};

const filter = process.argv.slice(2);
let files = find('dist/test');
if (filter.length > 0) files = files.filter((f) => filter.some((x) => f.includes(x)));
const unit = files.filter((f) => !f.includes('/e2e/'));
const e2e = files.filter((f) => f.includes('/e2e/'));
const lanes = process.env.SKIFF_TEST_SERIAL === '1' ? 1 : Math.max(1, Number(process.env.SKIFF_TEST_LANES ?? 3));

// Objects a server shares with its own read-only informers are frozen under test (and in every
// server the tests start), so code that changes one fails loudly instead of corrupting a cache.
// `skiff up` registers its cluster under $XDG_STATE_HOME and merges a context into $KUBECONFIG (as
// kind does): under test, both land in a directory of this run, never in the user's own files.
const userState = mkdtempSync(join(tmpdir(), 'skiff-test-user-'));
const env = { ...process.env, SKIFF_FREEZE_SHARED: '1', XDG_STATE_HOME: join(userState, 'state'), KUBECONFIG: join(userState, 'kubeconfig') };
process.on('exit', () => rmSync(userState, { recursive: true, force: true }));
const logDir = join('test-artifacts', 'logs');
rmSync(logDir, { recursive: true, force: true });
mkdirSync(logDir, { recursive: true });

// A test that hangs fails after 5 minutes instead of eating CI's time; a file whose tests are done
// exits even if a stray handle would keep its process alive.
const runnerArgs = (list, concurrency) => [
  '--test',
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-concurrency=${concurrency}`,
  '--test-timeout=300000',
  '--test-force-exit',
  ...list,
];

const name = (f) => basename(f, '.test.js');
const groupOf = (f) => (SELF_CONTAINED.has(name(f)) ? undefined : STORY.has(name(f)) ? 'story' : 'machine');

/** One job: a process running some test files, its output in a log. */
function job(label, list, concurrency) {
  return { label, list, concurrency, group: list.length === 1 ? groupOf(list[0]) : undefined, expected: list.length === 1 ? (EXPECTED_SECONDS[name(list[0])] ?? 10) : 60 };
}

const jobs = [];
// The unit files in two halves (every other file), so they spread over the lanes that free up
// last; they take minutes in all, so they start before the shorter end-to-end files.
for (const [i, half] of [unit.filter((_, k) => k % 2 === 0), unit.filter((_, k) => k % 2 === 1)].entries()) {
  if (half.length > 0) jobs.push({ ...job(`unit tests ${i + 1}/2 (${half.length} files)`, half, 1), expected: 200 });
}
for (const f of e2e) jobs.push(job(f.replace(/^dist\/test\//, '').replace(/\.test\.js$/, ''), [f], 1));

function counts(log) {
  const pass = /^ℹ pass (\d+)$/m.exec(log);
  const fail = /^ℹ fail (\d+)$/m.exec(log);
  return { pass: pass ? Number(pass[1]) : 0, fail: fail ? Number(fail[1]) : 0 };
}

const results = [];
const busy = new Set();
let running = 0;
const started = Date.now();
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

function runJob(j) {
  return new Promise((resolve) => {
    const logFile = join(logDir, `${j.label.replace(/[^a-z0-9.-]+/gi, '_')}.log`);
    const out = openSync(logFile, 'w');
    const t0 = Date.now();
    const child = spawn(process.execPath, runnerArgs(j.list, j.concurrency), { stdio: ['ignore', out, out], env });
    child.on('exit', (code, signal) => {
      closeSync(out);
      const ms = Date.now() - t0;
      const log = readFileSync(logFile, 'utf8');
      const c = counts(log);
      const ok = code === 0 && !signal;
      results.push({ ...j, ms, ok, logFile, ...c });
      console.log(`${ok ? '✔' : '✖'} ${j.label}: ${c.pass} passed${c.fail ? `, ${c.fail} failed` : ''} in ${seconds(ms)}${ok ? '' : ` (exit ${signal ?? code})`}`);
      if (!ok) process.stdout.write(`\n---- ${logFile} ----\n${log}\n---- end of ${logFile} ----\n\n`);
      resolve();
    });
  });
}

/** The next job to start: the two serial groups first while free (they are the longest chains), then the longest. */
function next(queue) {
  // A scenario runs with one job beside it at most, as it always has: its stories run at 20x speed
  // and a third busy process on two cores stretches its leases past their deadlines.
  if (busy.has('story') && running >= 2) return undefined;
  const runnable = queue.filter((j) => !j.group || !busy.has(j.group));
  if (runnable.length === 0) return undefined;
  const story = runnable.find((j) => j.group === 'story');
  if (story) return running <= 1 ? story : undefined;
  runnable.sort((a, b) => Number(b.group !== undefined) - Number(a.group !== undefined) || b.expected - a.expected);
  return runnable[0];
}

console.log(`${jobs.length} test jobs (${unit.length} unit files in two, ${e2e.length} end-to-end files one each), ${lanes} at a time; logs in ${logDir}/`);
await new Promise((done) => {
  const queue = [...jobs];
  const pump = () => {
    while (running < lanes) {
      const j = next(queue);
      if (!j) break;
      queue.splice(queue.indexOf(j), 1);
      running++;
      if (j.group) busy.add(j.group);
      void runJob(j).then(() => {
        running--;
        if (j.group) busy.delete(j.group);
        if (queue.length === 0 && running === 0) done();
        else pump();
      });
    }
  };
  if (queue.length === 0) done();
  else pump();
});

const table = [...results].sort((a, b) => b.ms - a.ms);
const rows = table.map((r) => `${(r.ms / 1000).toFixed(1).padStart(8)}  ${r.ok ? ' ' : '✖'} ${r.label}`);
writeFileSync(join('test-artifacts', 'durations.txt'), `${'seconds'.padStart(8)}    job\n${rows.join('\n')}\n`);
const failed = results.filter((r) => !r.ok);
const pass = results.reduce((s, r) => s + r.pass, 0);
const fail = results.reduce((s, r) => s + r.fail, 0);
console.log(`\n---- slowest jobs (test-artifacts/durations.txt) ----\n${rows.slice(0, 10).join('\n')}`);
console.log(`\n${pass} tests passed, ${fail} failed, in ${results.length} jobs; ${seconds(Date.now() - started)} in all`);
if (failed.length > 0) {
  console.log(`failed: ${failed.map((r) => `${r.label} (${r.logFile})`).join(', ')}`);
  process.exit(1);
}
