// The scenario report as a person reads it: a skiff run where a deleted node comes back, beside a
// kubernetes run where it stays gone and its kubelet floods the log.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderReport, renderTimelineSvg } from '../../src/scenarios/report.js';
import type { ScenarioReport, ScenarioRun, TimelineEntry } from '../../src/scenarios/timeline.js';

const ready = (t: number, node: string): TimelineEntry => ({ t, kind: 'node-state', node, state: 'Ready', taints: [], unschedulable: false });

function skiffRun(): ScenarioRun {
  return {
    scenario: 'node-deleted',
    description: 'A Node object is deleted while its agent runs.',
    mode: 'skiff',
    speed: 10,
    startedAt: '2026-01-01T00:00:00Z',
    durationMs: 12_000,
    nodes: ['node-1', 'node-2'],
    processes: ['node-1', 'node-2'],
    entries: [
      { t: 0, kind: 'node-registered', node: 'node-1', uid: 'u1', again: false },
      ready(0, 'node-1'),
      ready(0, 'node-2'),
      { t: 100, kind: 'pods', node: 'node-1', running: 2, pending: 0, terminating: 0 },
      { t: 1000, kind: 'log', process: 'node-1', level: 'info', msg: 'registered' },
      { t: 4000, kind: 'step', label: 'wait for pods' },
      { t: 5000, kind: 'fault', action: 'delete', target: 'Node/node-1', label: 'delete Node node-1' },
      { t: 5000, kind: 'node-deleted', node: 'node-1', uid: 'u1' },
      { t: 5000, kind: 'node-state', node: 'node-1', state: 'absent', taints: [], unschedulable: false },
      { t: 5200, kind: 'node-registered', node: 'node-1', uid: 'u2', again: true },
      { t: 5200, kind: 'node-state', node: 'node-1', state: 'NotReady', taints: ['node.kubernetes.io/not-ready:NoSchedule'], unschedulable: false },
      ready(5400, 'node-1'),
      { t: 5300, kind: 'log', process: 'node-1', level: 'info', msg: 'node object gone: registering again' },
      { t: 5500, kind: 'event', type: 'Normal', reason: 'RegisteredNode', object: 'Node/node-1', message: 'Node node-1 event: <script>alert(1)</script>' },
    ],
    verdicts: [
      { expectation: 'node-1 is registered again', passed: true, measured: 're-registered after 200 ms' },
      { expectation: 'pods keep running', passed: true, measured: '2 running throughout' },
    ],
    passed: true,
  };
}

function kubernetesRun(): ScenarioRun {
  const flood: TimelineEntry[] = [];
  for (let t = 6000; t < 12_000; t += 1000) flood.push({ t, kind: 'log', process: 'node-1', level: 'E', msg: 'Error updating node status, will retry' });
  return {
    scenario: 'node-deleted',
    description: 'A Node object is deleted while its agent runs.',
    mode: 'kubernetes',
    speed: 10,
    startedAt: '2026-01-01T00:01:00Z',
    durationMs: 12_000,
    nodes: ['node-1', 'node-2'],
    processes: ['node-1', 'node-2'],
    entries: [
      ready(0, 'node-1'),
      ready(0, 'node-2'),
      { t: 100, kind: 'pods', node: 'node-1', running: 2, pending: 0, terminating: 0 },
      { t: 5000, kind: 'fault', action: 'delete', target: 'Node/node-1', label: 'delete Node node-1' },
      { t: 5000, kind: 'node-deleted', node: 'node-1', uid: 'k1' },
      { t: 5000, kind: 'node-state', node: 'node-1', state: 'absent', taints: [], unschedulable: false },
      ...flood,
      { t: 9000, kind: 'pods', node: 'node-1', running: 0, pending: 0, terminating: 2 },
      { t: 9100, kind: 'event', type: 'Warning', reason: 'NodeNotFound', object: 'Node/node-1', message: 'node "node-1" not found' },
    ],
    verdicts: [
      { expectation: 'node-1 is registered again', passed: false, measured: 'still absent after 7.0 s' },
      { expectation: 'pods keep running', passed: false, measured: '0 running from 9.0 s' },
    ],
    passed: false,
  };
}

const report: ScenarioReport = { scenario: 'node-deleted', description: 'A Node object is deleted while its agent runs.', runs: [skiffRun(), kubernetesRun()] };

/** The HTML of one run's section. */
function section(html: string, mode: string): string {
  const start = html.indexOf(`<section class="run" data-mode="${mode}"`);
  assert.ok(start >= 0, `a section for ${mode}`);
  return html.slice(start, html.indexOf('</section>', start));
}

const count = (haystack: string, needle: string) => haystack.split(needle).length - 1;

test('the report is one complete HTML document that needs nothing from the network', () => {
  const html = renderReport(report);
  assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
  assert.match(html, /<\/body>\n<\/html>\n$/);
  assert.match(html, /<h1>Scenario <code>node-deleted<\/code><\/h1>/);
  assert.ok(html.includes('A Node object is deleted while its agent runs.'));
  assert.ok(!/https?:\/\//.test(html), 'no http:// or https:// references');
  assert.ok(!/<script|<link|<img|@import|url\(/i.test(html), 'no scripts, stylesheets, images or fonts to fetch');
  assert.equal(renderReport(report), html, 'the same report renders the same bytes');
});

test('each run has its section, in order, with a row per node and a fault marker', () => {
  const html = renderReport(report);
  assert.ok(html.indexOf('data-mode="skiff"') < html.indexOf('data-mode="kubernetes"'));
  for (const mode of ['skiff', 'kubernetes']) {
    const s = section(html, mode);
    assert.equal(count(s, 'class="node-row" data-node="node-1"'), 1, `${mode}: one node-1 row`);
    assert.equal(count(s, 'class="node-row" data-node="node-2"'), 1, `${mode}: one node-2 row`);
    assert.equal(count(s, 'class="fault" data-action="delete"'), 1, `${mode}: one fault`);
    assert.equal(count(s, 'class="fault-marker"'), 1);
    assert.ok(s.includes('>delete Node node-1</text>'), `${mode}: the fault's label`);
    assert.ok(s.includes('class="deleted-marker"'), `${mode}: the deletion is marked`);
    assert.ok(s.includes('class="segment state-absent"'), `${mode}: node-1 absent after the delete`);
  }
  assert.match(section(html, 'skiff'), /<h2><span class="mode">skiff<\/span> <span class="badge pass">PASSED<\/span><\/h2>/);
  assert.match(section(html, 'kubernetes'), /<span class="badge fail">FAILED<\/span>/);
  assert.ok(section(html, 'skiff').includes('speed ×10'));
});

test('only the skiff run shows node-1 coming back, Ready again and tainted on the way', () => {
  const html = renderReport(report);
  const skiff = section(html, 'skiff');
  const kube = section(html, 'kubernetes');
  assert.equal(count(skiff, 'class="reregistered-marker"'), 1);
  assert.ok(skiff.includes('node-1 re-registered at 5.20 s'));
  assert.equal(count(kube, 'reregistered-marker'), 0);
  assert.match(skiff, /class="segment state-Ready" data-state="Ready" data-from="5400" data-to="12000"/);
  assert.ok(skiff.includes('class="taint-marker"') && skiff.includes('node.kubernetes.io/not-ready:NoSchedule'));
  assert.match(kube, /class="segment state-absent" data-state="absent" data-from="5000" data-to="12000"/);
});

test('the kubernetes pods drop to none at 9 s', () => {
  const kube = section(renderReport(report), 'kubernetes');
  assert.ok(kube.includes('node-1 pods from 9.00 s to 12.00 s: 0 running, 0 pending, 2 terminating'));
  assert.ok(kube.includes('class="pods-step" data-running="0"'));
});

test('verdicts read as pass or fail without colour, and side by side when there are two runs', () => {
  const html = renderReport(report);
  const skiff = section(html, 'skiff');
  const kube = section(html, 'kubernetes');
  assert.ok(skiff.includes('<table class="verdicts">'));
  assert.equal(count(skiff, '<tr class="verdict pass" data-passed="true">'), 2);
  assert.ok(skiff.includes('<td>node-1 is registered again</td><td>re-registered after 200 ms</td><td class="result pass">✓ pass</td>'));
  assert.equal(count(kube, '<tr class="verdict fail" data-passed="false">'), 2);
  assert.ok(kube.includes('<td>still absent after 7.0 s</td><td class="result fail">✗ fail</td>'));
  const summary = html.slice(html.indexOf('<table class="summary">'), html.indexOf('<section'));
  assert.ok(summary.length > 0 && html.indexOf('<table class="summary">') < html.indexOf('<section'));
  assert.ok(summary.includes('✓ pass') && summary.includes('✗ fail'));
  assert.ok(!renderReport({ ...report, runs: [skiffRun()] }).includes('class="summary"'), 'no summary for one run');
});

test('data is escaped: an event message cannot inject markup', () => {
  const html = renderReport(report);
  assert.ok(html.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  assert.ok(!html.includes('<script>'));
  assert.ok(section(html, 'skiff').includes('<title>RegisteredNode: Node node-1 event: &lt;script&gt;alert(1)&lt;/script&gt; (Node/node-1)</title>'));
  assert.ok(section(html, 'kubernetes').includes('class="event-marker event-Warning"'));
  assert.ok(section(html, 'kubernetes').includes('node &quot;node-1&quot; not found'));
});

test('the log strips show the kubernetes flood against the quiet skiff agent', () => {
  const html = renderReport(report);
  const kube = section(html, 'kubernetes');
  const skiff = section(html, 'skiff');
  assert.ok(kube.includes('class="log-strip" data-process="node-1" data-total="6"'));
  assert.ok(kube.includes('>6 lines</text>'));
  assert.ok(kube.includes('Error updating node status, will retry'));
  assert.equal(count(kube, 'data-problems="1"'), 6, 'each error line is counted as one');
  assert.ok(skiff.includes('class="log-strip" data-process="node-1" data-total="2"'));
  assert.ok(skiff.includes('>2 lines</text>'));
  assert.ok(skiff.includes('class="log-strip" data-process="node-2" data-total="0"'));
  assert.ok(skiff.includes('>0 lines</text>'));
});

test('renderTimelineSvg draws one accessible SVG for one run', () => {
  const svg = renderTimelineSvg(skiffRun(), { widthPx: 800, durationMs: 20_000 });
  assert.match(svg, /^<svg class="timeline" data-mode="skiff" role="img" aria-label="Timeline of the skiff run of scenario node-deleted: 2 nodes, 1 fault, 1 events over 12.00 s; passed" viewBox="0 0 800 /);
  assert.ok(svg.endsWith('</svg>'));
  assert.ok(svg.includes('<title>Timeline of the skiff run'));
  assert.ok(svg.includes('class="after-end"'), 'the axis runs on past the run: the rest is greyed out');
  assert.ok(svg.includes('>20 s</text>'), 'the axis runs to the common duration');
  assert.ok(svg.includes('class="step" data-label="wait for pods"'));
  assert.ok(!svg.includes('NaN') && !svg.includes('Infinity'));
});

test('an empty run still draws', () => {
  const empty: ScenarioRun = { ...skiffRun(), nodes: [], processes: [], entries: [], verdicts: [], durationMs: 0 };
  const svg = renderTimelineSvg(empty, { widthPx: 400, durationMs: 0 });
  assert.match(svg, /^<svg /);
  assert.ok(!svg.includes('NaN') && !svg.includes('Infinity'));
  assert.ok(renderReport({ scenario: 'x', description: '', runs: [] }).includes('no runs'));
});

test('Lease renewals tick along a node row, leader changes mark their own row, and a zombie has its own colour', () => {
  const run = skiffRun();
  run.entries.push(
    { t: 1000, kind: 'lease', node: 'node-2' },
    { t: 2000, kind: 'lease', node: 'node-2' },
    { t: 3000, kind: 'lease', node: 'node-2' },
    { t: 500, kind: 'leader', lease: 'kube-controller-manager', holder: 'server-1' },
    { t: 8000, kind: 'leader', lease: 'kube-controller-manager', holder: 'server-2' },
    { t: 8500, kind: 'leader', lease: 'kube-scheduler', holder: 'host_0f3a', member: '127.0.0.3:6443' },
    { t: 6000, kind: 'node-state', node: 'node-2', state: 'zombie', taints: [], unschedulable: false },
    { t: 7000, kind: 'unscheduled', count: 2 },
    { t: 9000, kind: 'unscheduled', count: 0 },
  );
  const svg = renderTimelineSvg(run, { widthPx: 900, durationMs: run.durationMs });
  const row = svg.slice(svg.indexOf('data-node="node-2"'), svg.indexOf('</g>', svg.indexOf('data-node="node-2"')));
  assert.match(row, /class="lease-ticks" data-count="3"/);
  assert.match(row, /data-state="zombie"/);
  assert.equal(count(svg, 'class="leader-marker"'), 3);
  assert.match(svg, /class="unscheduled" data-count="2"[^>]*><title>2 pods with no node from 7\.00 s to 9\.00 s/);
  assert.match(svg, /kube-controller-manager: server-2 at /);
  // A holder identity (hostname_uuid) names no member; the member it was recorded as does.
  assert.match(svg, /kube-scheduler: member 127\.0\.0\.3:6443 at /);
  const html = renderReport({ ...report, runs: [run] });
  assert.match(html, /zombie \(no Node object, its machine runs\)/, 'the legend explains it');
  assert.ok(html.includes('data-legend="leader"') && html.includes('data-legend="lease"') && html.includes('data-legend="unscheduled"'));
});

/** The legend entries of one run's section, by key. */
function legendKeys(s: string): string[] {
  const legend = s.slice(s.indexOf('<ul class="legend"'), s.indexOf('</ul>', s.indexOf('<ul class="legend"')));
  return [...legend.matchAll(/data-legend="([^"]+)"/g)].map((m) => m[1]!);
}

test('each legend lists only what its chart draws', () => {
  const html = renderReport(report);
  assert.deepEqual(legendKeys(section(html, 'skiff')), [
    'state-Ready', 'state-NotReady', 'state-absent', 'taint', 'reregistered', 'node-deleted', 'pods', 'fault', 'step', 'event-Normal', 'log',
  ]);
  assert.deepEqual(legendKeys(section(html, 'kubernetes')), ['state-Ready', 'state-absent', 'node-deleted', 'pods', 'fault', 'event-Warning', 'log', 'log-problem']);
  for (const absent of ['zombie', 'retired', 'Unknown (node stopped reporting)', 'leader change', 'Lease renewals', 'no node to run on']) {
    assert.ok(!html.includes(absent), `nothing in the report draws "${absent}", so no legend names it`);
  }
});

test('a re-registration is written on the chart, not only in a tooltip', () => {
  const html = renderReport(report);
  assert.match(section(html, 'skiff'), /<text [^>]*class="reregistered-label"[^>]*>re-registered 0\.20 s after its deletion<\/text>/);
  assert.ok(!section(html, 'kubernetes').includes('reregistered-label'));
});
