// Simulated behaviour as data: which containers start when, exit by themselves (a Job's pods
// complete) or crash, and stop how slowly — with every mistake in a stages file named by its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nodeStagesFor, parseStages, stagedConditions, stageFor, StageError } from '../../src/agent/runtimes/sim-stages.js';
import { SimulatedRuntime } from '../../src/agent/runtimes/simulated.js';
import { FakeClock } from '../../src/util/clock.js';
import type { ExitInfo } from '../../src/agent/runtimes/runtime.js';

const STAGES = `
pods:
  - name: jobs-complete
    selector: {ownerKind: Job}
    start: {delay: 1s, jitter: 2s}
    exit: {after: 5s, code: 0}
  - name: canary-crashes
    selector: {matchLabels: {track: canary}, container: app}
    exit: {after: 30s, code: 1}
  - name: slow-stop
    selector: {namespace: batch, matchAnnotations: {slow: "yes"}}
    stop: {delay: 20s}
`;

const job = { namespace: 'default', ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: 'j', uid: 'u', controller: true }] };

test('the first stage whose selector matches decides', () => {
  const stages = parseStages(STAGES, 's.yaml').pods;
  assert.equal(stageFor(stages, { meta: job, container: 'c' })?.name, 'jobs-complete');
  assert.equal(stageFor(stages, { meta: { labels: { track: 'canary' } }, container: 'app' })?.name, 'canary-crashes');
  assert.equal(stageFor(stages, { meta: { labels: { track: 'canary' } }, container: 'sidecar' }), undefined);
  assert.equal(stageFor(stages, { meta: { namespace: 'batch', annotations: { slow: 'yes' } }, container: 'c' })?.name, 'slow-stop');
  assert.equal(stageFor(stages, { meta: { namespace: 'default', annotations: { slow: 'yes' } }, container: 'c' }), undefined);
});

test('mistakes in a stages file are named by their place', () => {
  const bad = (yaml: string, msg: RegExp) => assert.throws(() => parseStages(yaml, 's.yaml'), (e: unknown) => e instanceof StageError && msg.test(e.message));
  bad('pods: [{name: a, exit: {after: 1s, code: 300}}]', /s\.yaml: pods\[0\]\.exit\.code: must be an exit code from 0 to 255/);
  bad('pods: [{name: a, start: {delay: soon}}]', /pods\[0\]\.start\.delay: /);
  bad('pods: [{name: a, selector: {labels: {}}}]', /pods\[0\]\.selector\.labels: unknown field/);
  bad('pods: [{name: a, selector: {matchLabels: {n: 1}}}]', /pods\[0\]\.selector\.matchLabels\.n: must be a string/);
  bad('machines: []', /\(top\)\.machines: unknown field/);
});

test('a Job container starts after its delay and jitter, then completes by itself; a crashing one fails with its code', async () => {
  const clock = new FakeClock();
  const rt = new SimulatedRuntime({ clock, startDelayMs: 0, stopDelayMs: 0, writeLogs: false, stages: parseStages(STAGES, 's.yaml').pods, random: () => 0.5 });
  const launch = (meta: object, container = 'c') => ({ podUid: 'u', namespace: 'default', podName: 'p', containerName: container, instance: 0, argv: [], command: [], args: [], env: {}, logPath: '/nonexistent/log', podMeta: meta });
  let started = false;
  const starting = rt.start(launch(job)).then((c) => {
    started = true;
    return c;
  });
  await clock.advance(1999);
  assert.equal(started, false, 'not before 1 s + half of the 2 s jitter');
  await clock.advance(1);
  const c = await starting;
  const box: { exit?: ExitInfo } = {};
  void c.exited.then((e) => (box.exit = e));
  await clock.advance(4999);
  assert.equal(box.exit === undefined, true, "still running");
  await clock.advance(1);
  assert.deepEqual([box.exit?.exitCode, box.exit?.reason], [0, 'Completed']);

  const canary = await rt.start(launch({ labels: { track: 'canary' } }, 'app'));
  await clock.advance(30_000);
  const e = await canary.exited;
  assert.deepEqual([e.exitCode, e.reason], [1, 'Error']);
});

test('node stages flip conditions by name and labels, from the node\'s start, for a while or for good', () => {
  const { nodes } = parseStages(
    `nodes:
  - name: pressure
    selector: {names: "sim-0[1-3]"}
    conditions:
      - {type: MemoryPressure, status: "True", after: 10s, for: 5s, reason: SimulatedPressure}
  - name: gpu-flaky
    selector: {matchLabels: {gpu: "yes"}}
    conditions:
      - {type: Ready, status: "False", after: 1m}
`,
    's.yaml',
  );
  const mine = (name: string, labels: Record<string, string> = {}) => nodeStagesFor(nodes, name, labels).map((s) => s.name);
  assert.deepEqual(mine('sim-02'), ['pressure']);
  assert.deepEqual(mine('sim-04'), []);
  assert.deepEqual(mine('sim-10', { gpu: 'yes' }), ['gpu-flaky']);
  const at = (ms: number) => stagedConditions(nodes, ms).map((c) => `${c.type}=${c.status}`);
  assert.deepEqual(at(9_999), []);
  assert.deepEqual(at(10_000), ['MemoryPressure=True']);
  assert.deepEqual(at(15_000), []);
  assert.deepEqual(at(3_600_000), ['Ready=False'], 'without for: for good');
  assert.throws(() => parseStages('nodes: [{name: a, conditions: [{type: Ready, status: true}]}]', 's.yaml'), /nodes\[0\]\.conditions\[0\]\.status: must be "True", "False" or "Unknown" \(quoted\)/);
  assert.throws(() => parseStages('nodes: [{name: a, selector: {names: "("}, conditions: [{type: Ready, status: "True"}]}]', 's.yaml'), /nodes\[0\]\.selector\.names: /);
});
