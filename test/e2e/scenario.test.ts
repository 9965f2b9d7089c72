// `skiff scenario` end to end: both failure stories replayed in both modes on real clusters, each
// mode passing its own expectations (in kubernetes mode the expectation is upstream's failure),
// the HTML report opened in headless Chromium and checked for what a person sees there (a row
// per node, the fault, the verdicts), a screenshot kept under test-artifacts/, and a scenario file
// a user wrote.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { runSkiff } from '../support/cluster.js';
import type { ScenarioReport } from '../../src/scenarios/timeline.js';

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));
const CHROMIUM = process.env.SKIFF_CHROMIUM_BIN ?? '/usr/bin/chromium';

describe('skiff scenario', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skiff-scenario-test-'));
  let browser: Browser;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The flags keep Chromium off the network it would otherwise reach for at every start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  });

  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('node-deleted: skiff restores the Node and keeps its pods; upstream leaves it gone, floods its log and loses the pods', async () => {
    const report = join(dir, 'node-deleted.html');
    const json = join(dir, 'node-deleted.json');
    const r = await runSkiff(['scenario', 'run', 'node-deleted', '--mode', 'both', '--report', report, '--json', json], { timeoutMs: 180_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /node-deleted — skiff mode .*: PASSED/);
    assert.match(r.stdout, /node-deleted — kubernetes mode .*: PASSED/);
    assert.match(r.stderr, /step 3\/4: fault: kubectl delete node node-1/, 'progress names each step');
    const data = JSON.parse(readFileSync(json, 'utf8')) as ScenarioReport;
    assert.deepEqual(data.runs.map((x) => [x.mode, x.passed]), [['skiff', true], ['kubernetes', true]]);
    const restored = data.runs[0]!.verdicts.find((v) => v.expectation.startsWith('Node node-1 is re-created'))!;
    assert.match(restored.measured, /^restored in \d+ ms$/);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`file://${report}`);
    for (const mode of ['skiff', 'kubernetes']) {
      const run = page.locator(`section.run[data-mode="${mode}"]`);
      assert.equal(await run.locator('.badge').innerText(), 'PASSED');
      assert.equal(await run.locator('g.node-row').count(), 2, `${mode}: a row per node`);
      assert.equal(await run.locator('g.node-row[data-node="node-1"]').count(), 1);
      assert.equal(await run.locator('g.fault[data-action="delete-node"]').count(), 1, `${mode}: the fault marked`);
      const rows = await run.locator('table.verdicts tr.verdict').allInnerTexts();
      assert.ok(rows.length >= 4 && rows.every((t) => t.includes('✓ pass')), `${mode}: every verdict shown as passed`);
    }
    assert.ok((await page.locator('section.run[data-mode="skiff"] g.reregistered-marker').count()) >= 1, 'skiff: the re-registration shown');
    assert.equal(await page.locator('section.run[data-mode="kubernetes"] g.reregistered-marker').count(), 0, 'upstream: never re-registered');
    await page.screenshot({ path: join(ARTIFACTS, 'scenario-node-deleted.png'), fullPage: true });
    await page.close();
  });

  it('control-plane-member-down: workers joined through the killed member stay Ready in skiff, all go NotReady upstream', async () => {
    const r = await runSkiff(['scenario', 'run', 'control-plane-member-down', '--mode', 'both'], { timeoutMs: 240_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /node-1, node-2, node-3 stay Ready throughout\s+every node stayed Ready\s+ok/);
    assert.match(r.stdout, /Node node-3 turns NotReady\/Unknown after the fault\s+Unknown after [\d.]+ s\s+ok/);
  });

  it('runs a scenario file a user wrote, and says where a bad one is wrong', async () => {
    const file = join(dir, 'mine.yaml');
    writeFileSync(file, `name: my-agent-restart
description: An agent is killed and started again by hand; here it only has to come back NotReady.
cluster: {servers: 1, nodes: 1}
workload: {replicas: 2}
steps:
  - wait-ready
  - fault: sigkill
    target: node-1
  - observe: 2m
expect:
  skiff:
    - node-not-ready: {node: node-1}
    - pods-kept: {node: node-1}
`);
    const r = await runSkiff(['scenario', 'run', file, '--mode', 'skiff', '--speed', '20'], { timeoutMs: 120_000 });
    assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /my-agent-restart — skiff mode \(speed 20×/);
    assert.match(r.stdout, /Node node-1 turns NotReady\/Unknown after the fault\s+Unknown after/);

    writeFileSync(file, 'name: broken\nsteps:\n  - fault: delete-node\n    target: node-7\n');
    const bad = await runSkiff(['scenario', 'run', file]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /mine\.yaml: steps\[0\]\.target: no node node-7 in this cluster \(node-1 … node-2\)/);
  });
});

