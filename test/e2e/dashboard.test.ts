// `skiff dashboard` end to end, in headless Chromium: a real server, real agents and the dashboard
// as its own process, the page driven as a person would (rows, buttons, the node panel), checked
// against what the API and kubectl say. Screenshots land in test-artifacts/.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_JOIN_TOKEN, TestAgent, TestServer, eventually } from '../support/cluster.js';
import { startDashboard } from '../support/dashboard.js';
import type { ManagedProcess } from '../../src/util/processes.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import type { ApiClient } from '../../src/client/rest.js';
import type { Node } from '../../src/api/kinds/node.js';

const ARTIFACTS = fileURLToPath(new URL('../../../test-artifacts/', import.meta.url));
const CHROMIUM = process.env.SKIFF_CHROMIUM_BIN ?? '/usr/bin/chromium';
const VIEWER_TOKEN = 'viewer-token-0123456789abcdef';

function row(page: Page, node: string) {
  return page.locator(`.node-line[data-node="${node}"]`);
}

describe('skiff dashboard', () => {
  const s = new TestServer('skiff-dashboard');
  const agents = [new TestAgent(s, 'dash-a'), new TestAgent(s, 'dash-b')];
  let client: ApiClient;
  let browser: Browser;
  let admin: { proc: ManagedProcess; url: string };
  let viewer: { proc: ManagedProcess; url: string };
  let page: Page;

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const tokens = join(s.dataDir, 'tokens.csv');
    writeFileSync(tokens, `${VIEWER_TOKEN},viewer,viewer-uid,\n`);
    await s.start(['--token', TEST_JOIN_TOKEN, '--token-auth-file', tokens, '--node-monitor-period', '500ms', '--node-monitor-grace-period', '6s']);
    client = s.client();
    for (const a of agents) await a.start(['--runtime', 'simulated']);
    // The viewer may read the cluster (the built-in `view` role, and nodes and Leases, which `view`
    // leaves out as upstream's does) and change nothing.
    await s.k(['create', 'clusterrolebinding', 'viewer-view', '--clusterrole', 'view', '--user', 'viewer']);
    await s.k(['create', 'clusterrole', 'node-reader', '--verb', 'get,list,watch', '--resource', 'nodes,leases.coordination.k8s.io']);
    await s.k(['create', 'clusterrolebinding', 'viewer-nodes', '--clusterrole', 'node-reader', '--user', 'viewer']);
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    const viewerKubeconfig = join(s.dataDir, 'viewer.kubeconfig');
    writeFileSync(
      viewerKubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: kc.server, 'certificate-authority-data': Buffer.from(kc.caPem!).toString('base64') } }],
        users: [{ name: 'viewer', user: { token: VIEWER_TOKEN } }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'viewer' } }],
        'current-context': 'c',
      }),
    );
    admin = await startDashboard(s.kubeconfig, join(s.dataDir, 'dashboard.log'));
    viewer = await startDashboard(viewerKubeconfig, join(s.dataDir, 'dashboard-viewer.log'));
    // The flags keep Chromium off the network it would otherwise reach for at every start.
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(admin.url);
  });

  after(async () => {
    await browser?.close();
    await admin?.proc.stop();
    await viewer?.proc.stop();
    for (const a of agents) await a.stop();
    client?.close();
    await s.stop();
    s.cleanup();
  });

  it('lists every node of the cluster, live', async () => {
    for (const a of agents) await row(page, a.nodeName).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.node-line').count(), 2);
    assert.equal(await row(page, 'dash-a').getAttribute('data-health'), 'Ready');
    assert.match(await page.locator('[data-count-of="Ready"]').innerText(), /^2\s+Ready/);
    assert.equal(await page.locator('[data-connection]').getAttribute('data-connection'), 'live');
    // Once the view has listed, the timeline speaks for the time it watched, not "waiting".
    await page.locator('.timeline[data-listed="true"]').waitFor({ timeout: 10_000 });
    assert.match(await page.locator('.timeline-caption').innerText(), /since the dashboard started watching|the last 10 minutes/);
    // Each row says how long ago its Lease was renewed and how often in the last minute.
    assert.match(await row(page, 'dash-a').locator('.c-lease').innerText(), /^\d+s ago\s+\d+\/min$/);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-nodes.png'), fullPage: true });
  });

  it('turns a node NotReady within 2 s of the API saying so when its agent is SIGKILLed', async () => {
    const b = agents[1]!;
    b.kill('SIGKILL');
    await b.proc!.exited;
    await eventually(async () => {
      const n = await client.get<Node>(`/api/v1/nodes/${b.nodeName}`);
      return n.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True';
    }, 30_000, 'the API marking the node not Ready');
    await page.locator(`.node-line[data-node="${b.nodeName}"]:not([data-health="Ready"])`).waitFor({ timeout: 2_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-node-not-ready.png'), fullPage: true });
    await b.start(['--runtime', 'simulated']);
    await page.locator(`.node-line[data-node="${b.nodeName}"][data-health="Ready"]`).waitFor({ timeout: 10_000 });
  });

  it('shows a deleted node absent, then back, and counts the re-registration', async () => {
    const a = agents[0]!;
    await s.k(['delete', 'node', a.nodeName, '--wait=false']);
    // The agent puts its Node back within a second: its row says it is back and counts the
    // re-registration; the timeline draws the gap (absent) between the deletion and the return.
    await page.locator(`.node-line[data-node="${a.nodeName}"][data-health="Ready"] .badge.returned`).waitFor({ timeout: 20_000 });
    await page.locator(`.node-line[data-node="${a.nodeName}"] .reregistrations[data-count="1"]`).waitFor({ timeout: 10_000 });
    const timelineRow = page.locator(`.timeline g.node-row[data-node="${a.nodeName}"]`);
    await eventually(async () => (await timelineRow.locator('g.reregistered-marker').count()) >= 1 && (await timelineRow.locator('rect[data-state="absent"]').count()) >= 1, 10_000, 'the absence and the return on the timeline');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-reregistered.png'), fullPage: true });
  });

  it('cordons and uncordons a node from its panel, as the user, by keyboard too', async () => {
    const a = agents[0]!;
    // Enter on a focused row opens its panel and moves the focus there; Enter on Cordon cordons,
    // and the result is announced.
    await row(page, a.nodeName).focus();
    await page.keyboard.press('Enter');
    await page.locator('#node-panel-h:focus').waitFor({ timeout: 5_000 });
    await page.getByRole('button', { name: 'Cordon', exact: true }).press('Enter');
    await page.getByRole('status').filter({ hasText: `node/${a.nodeName} cordoned` }).waitFor({ timeout: 5_000 });
    await eventually(async () => /SchedulingDisabled/.test(await s.k(['get', 'node', a.nodeName])), 10_000, 'kubectl get node showing SchedulingDisabled');
    await page.locator(`.node-line[data-node="${a.nodeName}"][data-cordoned="true"]`).waitFor({ timeout: 5_000 });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-cordoned.png'), fullPage: true });
    await page.getByRole('button', { name: 'Uncordon', exact: true }).click();
    await eventually(async () => !/SchedulingDisabled/.test(await s.k(['get', 'node', a.nodeName])), 10_000, 'kubectl get node without SchedulingDisabled');
  });

  it("follows a pod's log, deletes the pod and scales a Deployment from the page", async () => {
    const a = agents[0]!;
    await s.k(['run', 'logme', '--image', 'busybox', '--overrides', JSON.stringify({ spec: { nodeName: a.nodeName } })]);
    await s.k(['create', 'deployment', 'web', '--image', 'nginx', '--replicas', '1']);
    await row(page, a.nodeName).click();
    const podRow = page.locator('tr[data-pod="default/logme"]');
    await podRow.waitFor({ timeout: 10_000 });
    await podRow.getByRole('button', { name: 'Logs of logme' }).click();
    await eventually(async () => /simulated container logme/.test(await page.locator('.log-text').innerText()), 10_000, 'the log on the page');
    await podRow.getByRole('button', { name: 'Delete pod logme' }).click();
    await eventually(async () => (await s.kubectl(['get', 'pod', 'logme'])).code !== 0, 20_000, 'the pod gone');
    const web = page.locator('tr[data-workload="Deployment/default/web"]');
    await web.waitFor({ timeout: 10_000 });
    await web.getByLabel('replicas of web').fill('3');
    await web.getByRole('button', { name: 'Scale' }).click();
    await eventually(async () => (await s.k(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])) === '3', 10_000, 'kubectl seeing 3 replicas');
    await eventually(async () => (await web.locator('td').nth(2).innerText()) === '3/3', 20_000, 'the page showing 3 of 3 ready');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-workloads.png'), fullPage: true });
    await s.k(['delete', 'deployment', 'web', '--wait=false']);
  });

  it("lists namespaces with their pods and Services, and follows a pod's log from there", async () => {
    const a = agents[0]!;
    await s.k(['run', 'nslog', '--image', 'busybox', '--overrides', JSON.stringify({ spec: { nodeName: a.nodeName } })]);
    await s.k(['create', 'service', 'clusterip', 'nslog-svc', '--tcp', '80:80']);
    const ns = page.locator('.namespaces tr[data-namespace="default"]');
    await ns.waitFor({ timeout: 10_000 });
    await ns.getByRole('button', { name: 'default', exact: true }).click();
    const panel = page.locator('.namespace-panel[data-namespace="default"]');
    const podRow = panel.locator('tr[data-pod="default/nslog"]');
    await podRow.waitFor({ timeout: 10_000 });
    assert.match(await podRow.innerText(), new RegExp(a.nodeName), 'the pod row names its node');
    const svc = panel.locator('tr[data-service="default/nslog-svc"]');
    await svc.waitFor({ timeout: 10_000 });
    assert.match(await svc.innerText(), /ClusterIP[\s\S]*80\/TCP[\s\S]*no ready endpoints/);
    await podRow.getByRole('button', { name: 'Logs of nslog' }).click();
    await eventually(async () => /simulated container nslog/.test(await panel.locator('.log-text').innerText()), 10_000, 'the log in the namespace panel');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-namespaces.png'), fullPage: true });
    await panel.getByRole('button', { name: 'Close the namespace panel' }).click();
    await s.k(['delete', 'pod', 'nslog', '--wait=false']);
    await s.k(['delete', 'service', 'nslog-svc']);
  });

  it('shows a view-only user the cluster, and refuses their cordon with the API message', async () => {
    const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await p.goto(viewer.url);
      for (const a of agents) await row(p, a.nodeName).waitFor({ timeout: 10_000 });
      assert.match(await p.locator('.who').innerText(), /as viewer/);
      await row(p, 'dash-b').click();
      await p.getByRole('button', { name: 'Cordon', exact: true }).click();
      const alert = p.getByRole('alert');
      await alert.waitFor({ timeout: 5_000 });
      assert.match(await alert.innerText(), /nodes "dash-b" is forbidden: User "viewer" cannot patch resource "nodes"/);
      await p.screenshot({ path: join(ARTIFACTS, 'dashboard-viewer-refused.png'), fullPage: true });
      assert.doesNotMatch(await s.k(['get', 'node', 'dash-b']), /SchedulingDisabled/);
    } finally {
      await p.close();
    }
  });

  it('folds into one column in a narrow window: the node panel goes under the list', async () => {
    const p = await browser.newPage({ viewport: { width: 600, height: 900 } });
    try {
      await p.goto(admin.url);
      await row(p, 'dash-a').click();
      const list = await p.locator('section.nodes').boundingBox();
      const panel = await p.locator('section.node-panel').boundingBox();
      assert.ok(list && panel && panel.y >= list.y + list.height, `panel at y=${panel?.y}, list ends at ${list ? list.y + list.height : '?'}`);
      assert.ok(panel.x + panel.width <= 600, 'nothing wider than the window');
      await p.screenshot({ path: join(ARTIFACTS, 'dashboard-narrow.png'), fullPage: true });
    } finally {
      await p.close();
    }
  });

  it('reconnects by itself when the dashboard restarts, and starts again from a fresh view', async () => {
    const port = new URL(admin.url).port;
    await admin.proc.stop();
    await page.locator('[data-connection="reconnecting"]').waitFor({ timeout: 10_000 });
    // What changes while the page is cut off reaches it with the fresh view.
    await s.k(['cordon', 'dash-b']);
    admin = await startDashboard(s.kubeconfig, join(s.dataDir, 'dashboard-restarted.log'), `127.0.0.1:${port}`);
    await page.locator('[data-connection="live"]').waitFor({ timeout: 15_000 });
    await page.locator('.node-line[data-node="dash-b"][data-cordoned="true"]').waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('.node-line').count(), 2);
    await s.k(['uncordon', 'dash-b']);
  });

  it('answers only its own page: another Host, or a change without the page header, is refused', async () => {
    const u = new URL(admin.url);
    // A name rebound to loopback: the browser would send it as the Host.
    const rebound = await new Promise<number>((resolve, reject) => {
      request({ host: u.hostname, port: u.port, path: '/stream', headers: { host: `evil.example:${u.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    assert.equal(rebound, 403);
    // Its own page comes with a policy that runs no script and loads nothing from elsewhere.
    const own = await fetch(admin.url);
    assert.match(own.headers.get('content-security-policy') ?? '', /default-src 'self'.*frame-ancestors 'none'/);
    const forged = await fetch(`${admin.url}api/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ action: 'cordon', node: 'dash-a' }) });
    assert.equal(forged.status, 403);
    const bad = await fetch(`${admin.url}api/actions`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-skiff-dashboard': '1' }, body: JSON.stringify({ action: 'reboot', node: 'dash-a' }) });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { message: string }).message, /unknown action "reboot"/);
  });
});
