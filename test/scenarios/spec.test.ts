import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_DIR } from '../../src/cli/scenario.js';
import { parseScenario, ScenarioError } from '../../src/scenarios/spec.js';
import { judge } from '../../src/scenarios/expectations.js';
import { agentTimingFlags, serverTimingFlags } from '../../src/scenarios/timings.js';
import type { TimelineEntry } from '../../src/scenarios/timeline.js';

test('every built-in scenario parses and has expectations for both modes', () => {
  const files = readdirSync(BUILTIN_DIR).filter((f) => f.endsWith('.yaml'));
  assert.ok(files.length >= 8);
  for (const f of files) {
    const s = parseScenario(readFileSync(join(BUILTIN_DIR, f), 'utf8'), f);
    assert.equal(`${s.name}.yaml`, f);
    assert.ok(s.expect.skiff.length > 0 && s.expect.kubernetes.length > 0, `${f} expects something of both modes`);
  }
});

test('mistakes in a scenario file are named by their place', () => {
  const bad = (yaml: string, msg: RegExp) => assert.throws(() => parseScenario(yaml, 'x.yaml'), (e: unknown) => e instanceof ScenarioError && msg.test(e.message));
  bad('name: a\nsteps: [wait-ready]\ncluster: {servers: 2}', /x\.yaml: cluster\.servers: use 1 \(SQLite\) or 3/);
  bad('name: a\nsteps: [{fault: melt, target: node-1}]', /steps\[0\]\.fault: unknown fault melt/);
  bad('name: a\nsteps: [{fault: freeze, target: node-1}]', /steps\[0\]\.for: freeze needs a duration/);
  bad('name: a\nsteps: [{observe: soon}]', /steps\[0\]\.observe: invalid duration/);
  bad('name: a\nsteps: [wait-ready]\nexpect: {skiff: [{pods-kept: {node: node-1}, pods-lost: {node: node-1}}]}', /expect\.skiff\[0\]: one expectation per entry/);
  bad('name: a\nsteps: [wait-ready]\nexpec: {}', /\(top\)\.expec: unknown field/);
  bad('name: a\nsteps: [wait-ready]\ncluster: {endpoint: true}', /cluster\.endpoint: a control-plane endpoint needs servers: 3/);
});

test('timings are upstream defaults divided by the speed, with floors', () => {
  const s = serverTimingFlags(10);
  assert.equal(s[s.indexOf('--node-monitor-grace-period') + 1], '5s');
  assert.equal(s[s.indexOf('--default-unreachable-toleration-seconds') + 1], '30');
  assert.equal(s[s.indexOf('--pod-gc-period') + 1], '2s');
  const a = agentTimingFlags(100);
  assert.equal(a[a.indexOf('--node-lease-duration-seconds') + 1], '1', 'whole seconds, at least one');
  assert.equal(a[a.indexOf('--node-status-update-frequency') + 1], '100ms');
});

test('expectations read the timeline from the fault on and say what they measured', () => {
  const entries: TimelineEntry[] = [
    { t: 0, kind: 'node-state', node: 'node-1', state: 'Ready', taints: [], unschedulable: false },
    { t: 0, kind: 'node-state', node: 'node-2', state: 'Ready', taints: [], unschedulable: false },
    { t: 100, kind: 'log', process: 'node-1', level: 'error', msg: 'Error updating node status, will retry' },
    { t: 1000, kind: 'fault', action: 'delete-node', target: 'node-1', label: 'delete' },
    { t: 1010, kind: 'node-deleted', node: 'node-1', uid: 'a' },
    { t: 1010, kind: 'node-state', node: 'node-1', state: 'absent', taints: [], unschedulable: false },
    { t: 1030, kind: 'node-registered', node: 'node-1', uid: 'b', again: true },
    { t: 1030, kind: 'node-state', node: 'node-1', state: 'Ready', taints: [], unschedulable: false },
    { t: 5000, kind: 'node-state', node: 'node-2', state: 'Unknown', taints: ['node.kubernetes.io/unreachable:NoSchedule'], unschedulable: false },
    { t: 6000, kind: 'pod-deleted', pod: 'default/p', uid: 'p', node: 'node-2' },
    { t: 6100, kind: 'pods', node: 'node-1', running: 3, pending: 0, terminating: 0 },
  ];
  const run = { entries, durationMs: 61_000 };
  assert.deepEqual(judge({ kind: 'node-restored', node: 'node-1', withinMs: 1000 }, run), { expectation: 'Node node-1 is re-created within 1000 ms of its deletion', passed: true, measured: 'restored in 20 ms' });
  assert.equal(judge({ kind: 'node-absent', node: 'node-1' }, run).passed, false);
  assert.equal(judge({ kind: 'log-lines', process: 'node-1', match: 'Error updating', max: 0 }, run).passed, true, 'the line before the fault does not count');
  const flips = judge({ kind: 'nodes-stay-ready', nodes: ['node-1', 'node-2'] }, run);
  assert.equal(flips.passed, false);
  assert.match(flips.measured, /node-2/);
  assert.equal(judge({ kind: 'node-not-ready', node: 'node-2' }, run).measured, 'Unknown after 4.0 s');
  assert.equal(judge({ kind: 'pods-lost', node: 'node-2', min: 1 }, run).passed, true);
  assert.equal(judge({ kind: 'pods-kept', node: 'node-1' }, run).passed, true);
  assert.equal(judge({ kind: 'pods-running', count: 3 }, run).measured, '3 Running');
});

test('a passing expectation says what held, not what did not happen', () => {
  const entries: TimelineEntry[] = [
    { t: 0, kind: 'node-state', node: 'node-1', state: 'Ready', taints: [], unschedulable: false },
    { t: 0, kind: 'node-state', node: 'node-2', state: 'Ready', taints: [], unschedulable: false },
    { t: 1000, kind: 'fault', action: 'kill', target: 'server-1', label: 'kill server-1' },
  ];
  const run = { entries, durationMs: 5000 };
  assert.deepEqual(judge({ kind: 'nodes-stay-ready', nodes: ['node-1', 'node-2'] }, run), { expectation: 'node-1, node-2 stay Ready throughout', passed: true, measured: 'every node stayed Ready' });
  assert.equal(judge({ kind: 'nodes-stay-ready', nodes: ['node-2'] }, run).measured, 'node-2 stayed Ready');
  assert.deepEqual(judge({ kind: 'pods-kept', node: 'node-1' }, run), { expectation: 'the pods on node-1 are kept', passed: true, measured: 'none evicted or deleted' });
});

test('a cluster with a cloud names its nodes up to the group maximum and takes instance faults only', () => {
  const base = 'name: a\ncluster: {cloud: {min: 2, max: 3, cpu: "1"}}\n';
  const s = parseScenario(`${base}steps: [{fault: instance-lost, target: node-3}]\nexpect: {skiff: [{machines-added: {max: 0}}, {machine-without-node: {node: node-1, max: 2s}}]}`, 'x.yaml');
  assert.deepEqual(s.cluster.cloud, { min: 2, max: 3, cpu: '1', memory: '16Gi' });
  assert.equal(s.cluster.nodes, 2);
  assert.deepEqual(s.expect.skiff[1], { kind: 'machine-without-node', node: 'node-1', maxMs: 2000 });
  const bad = (yaml: string, msg: RegExp) => assert.throws(() => parseScenario(yaml, 'x.yaml'), (e: unknown) => e instanceof ScenarioError && msg.test(e.message));
  bad(`${base}steps: [{fault: sigkill, target: node-1}]`, /steps\[0\]\.fault: with a cloud, a node's machine is the cloud's/);
  bad(`${base}steps: [{fault: delete-node, target: node-4}]`, /steps\[0\]\.target: no node node-4 in this cluster \(node-1 … node-3\)/);
  bad('name: a\nsteps: [{fault: instance-lost, target: node-1}]', /steps\[0\]\.fault: instance-lost needs a cluster with a cloud/);
  bad('name: a\ncluster: {cloud: {min: 1, max: 2, memory: lots}}\nsteps: [wait-ready]', /cluster\.cloud\.memory: lots: /);
  bad('name: a\nsteps: [wait-ready]\nexpect: {kubernetes: [{machines-added: {min: 1}}]}', /expect\.kubernetes\[0\]\.machines-added: needs a cluster with a cloud/);
});

test('a machine running without its Node is measured from the fault, and machines added after it are counted', () => {
  const entries: TimelineEntry[] = [
    { t: 0, kind: 'instance', node: 'node-1', instance: 'i-1', state: 'Running' },
    { t: 0, kind: 'instance', node: 'node-2', instance: 'i-2', state: 'Running' },
    { t: 1000, kind: 'fault', action: 'delete-node', target: 'node-1', label: 'delete' },
    { t: 1010, kind: 'node-state', node: 'node-1', state: 'zombie', taints: [], unschedulable: false },
    { t: 500, kind: 'unscheduled', count: 1 },
    { t: 900, kind: 'unscheduled', count: 0 },
    { t: 5000, kind: 'unscheduled', count: 2 },
    { t: 40_000, kind: 'instance', node: 'node-3', instance: 'i-3', state: 'Pending' },
    { t: 45_000, kind: 'unscheduled', count: 0 },
    { t: 41_000, kind: 'instance', node: 'node-3', instance: 'i-3', state: 'Running' },
  ];
  const run = { entries, durationMs: 61_010 };
  const z = judge({ kind: 'machine-without-node', node: 'node-1', minMs: 60_000 }, run);
  assert.deepEqual(z, { expectation: "node-1's machine runs without a Node for at least 60.0 s", passed: true, measured: '60.0 s (still at the end)' });
  assert.equal(judge({ kind: 'machine-without-node', node: 'node-2', maxMs: 2000 }, run).measured, 'never');
  const added = judge({ kind: 'machines-added', max: 0 }, run);
  assert.equal(added.passed, false);
  assert.equal(added.measured, '1 (node-3), the first after 39.0 s');
  assert.deepEqual(judge({ kind: 'pods-unscheduled', minMs: 30_000 }, run), { expectation: 'pods wait with no node to run on for at least 30.0 s', passed: true, measured: '40.0 s, up to 2 at once' }, 'the wait before the fault does not count');
});
