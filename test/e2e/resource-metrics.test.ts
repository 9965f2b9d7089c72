// Resource metrics with real processes: the agent's summary API and /metrics/resource (through the
// API server's node proxy), metrics.k8s.io served by the server from its scrapes, and real kubectl
// top — whose figures follow a pod that burns CPU and then stops.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { issueCertificate } from '../../src/pki/certificates.js';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { SKIFF_BIN, TEST_JOIN_TOKEN, TestAgent, TestServer, eventually } from '../support/cluster.js';
import { startProcess, type ManagedProcess } from '../../src/util/processes.js';

const NODE = 'top-node';

/** The CPU column of a `kubectl top` row, in millicores. */
function cpuMillis(out: string, name: string, column = 1): number | undefined {
  const row = out.split('\n').find((l) => l.split(/\s+/)[0] === name);
  const cell = row?.split(/\s+/)[column];
  return cell === undefined ? undefined : Number(cell.replace(/m$/, ''));
}

describe('resource metrics: summary API, metrics.k8s.io, kubectl top (process runtime)', () => {
  const s = new TestServer('resource-metrics');
  const a = new TestAgent(s, NODE);
  const scratch = mkdtempSync(join(tmpdir(), 'resource-metrics-'));
  const stopFile = join(scratch, 'stop');
  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN, '--metric-resolution', '2s']);
    await a.start();
    const pod = (name: string, labels: Record<string, string>, command: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels },
      spec: { nodeName: NODE, containers: [{ name: 'main', image: 'busybox', command: ['sh', '-c', command], resources: { requests: { cpu: '100m', memory: '16Mi' } } }] },
    });
    // The process runtime shares the host's files: the test ends the loop by creating a file.
    await s.k(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [pod('burner', { app: 'burn' }, `while [ ! -e ${stopFile} ]; do :; done; exec sleep 3600`), pod('sleeper', { app: 'idle' }, 'exec sleep 3600')] }),
    });
    await eventually(async () => (await s.k(['get', 'pods', '-o', 'jsonpath={.items[*].status.phase}'])) === 'Running Running', 20_000, 'pods Running');
  });
  let fleet: ManagedProcess | undefined;
  after(async () => {
    writeFileSync(stopFile, '');
    await fleet?.stop(10_000);
    await a.stop();
    await s.stop();
    s.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the agent serves the summary API and /metrics/resource, through the node proxy', async () => {
    type Summary = {
      node: { nodeName: string; cpu: { usageCoreNanoSeconds: number; usageNanoCores?: number }; memory: { workingSetBytes: number } };
      pods: { podRef: { name: string; namespace: string }; containers: { name: string; cpu: { usageCoreNanoSeconds: number; usageNanoCores?: number }; memory: { workingSetBytes: number } }[] }[];
    };
    const summary = await eventually(async () => {
      const sum = JSON.parse(await s.k(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/stats/summary`])) as Summary;
      const burner = sum.pods.find((p) => p.podRef.name === 'burner');
      return burner?.containers[0]?.cpu.usageNanoCores !== undefined ? sum : undefined;
    }, 15_000, 'a summary with the burner pod and its CPU rate');
    assert.equal(summary.node.nodeName, NODE);
    assert.ok(summary.node.cpu.usageCoreNanoSeconds > 0 && summary.node.memory.workingSetBytes > 0, 'the node has figures');
    const burner = summary.pods.find((p) => p.podRef.name === 'burner')!;
    assert.equal(burner.containers[0]!.name, 'main');
    assert.ok(burner.containers[0]!.cpu.usageCoreNanoSeconds > 0, 'the busy loop used CPU');
    assert.ok(burner.containers[0]!.memory.workingSetBytes > 0, 'the shell has a resident set');
    const text = await s.k(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/metrics/resource`]);
    assert.match(text, /^container_cpu_usage_seconds_total\{container="main",namespace="default",pod="burner"\} [\d.e+]+ \d+$/m);
    assert.match(text, /^container_memory_working_set_bytes\{container="main",namespace="default",pod="sleeper"\} \d+ \d+$/m);
    assert.match(text, /^node_cpu_usage_seconds_total [\d.e+]+ \d+$/m);
    assert.match(text, /^resource_scrape_error 0$/m);
  });

  it("the agent's own port: other callers by RBAC on nodes/stats and nodes/metrics, as the kubelet asks", async () => {
    const tls = join(s.dataDir, 'tls');
    const ca = { certPem: readFileSync(join(tls, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(tls, 'ca.key'), 'utf8') };
    const scraper = await issueCertificate(ca, { commonName: 'scraper', usage: 'client' });
    const port = Number(await s.k(['get', 'node', NODE, '-o', 'jsonpath={.status.daemonEndpoints.kubeletEndpoint.Port}']));
    const get = (path: string): Promise<{ code: number; body: string }> =>
      new Promise((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port, path, cert: scraper.certPem, key: scraper.keyPem, rejectUnauthorized: false }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => (body += d.toString()));
            res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
          })
          .on('error', reject);
      });
    await s.k(['create', 'clusterrole', 'stats-reader', '--verb=get', '--resource=nodes/stats']);
    await s.k(['create', 'clusterrolebinding', 'scraper-stats', '--clusterrole=stats-reader', '--user=scraper']);
    const summary = await get('/stats/summary');
    assert.equal(summary.code, 200, summary.body);
    assert.equal((JSON.parse(summary.body) as { node: { nodeName: string } }).node.nodeName, NODE);
    const refused = await get('/metrics/resource');
    assert.equal(refused.code, 403);
    assert.equal(refused.body, 'Forbidden (user=scraper, verb=get, resource=nodes, subresource=metrics)');
  });

  it('discovery lists metrics.k8s.io, with its APIService and the reader role', async () => {
    const resources = await s.k(['api-resources', '--api-group=metrics.k8s.io', '--no-headers']);
    assert.match(resources, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    assert.match(resources, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
    assert.equal(await s.k(['get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'jsonpath={.spec.groupPriorityMinimum}']), '100');
    assert.match(await s.k(['explain', 'podmetrics.containers']), /^KIND:\s+PodMetrics$/m);
    await s.k(['create', 'clusterrolebinding', 'viewer-view', '--clusterrole=view', '--user=viewer']);
    await eventually(async () => (await s.kubectl(['auth', 'can-i', 'list', 'pods.metrics.k8s.io', '--as=viewer'])).stdout.trim() === 'yes', 10_000, 'view includes system:aggregated-metrics-reader');
    assert.equal((await s.kubectl(['auth', 'can-i', 'get', 'nodes.metrics.k8s.io', '--as=stranger'])).stdout.trim(), 'no');
  });

  it('metrics.k8s.io answers as metrics-server: nanocores, binary memory, timestamp and window; NotFound for a pod without figures', async () => {
    type PodMetrics = { kind: string; metadata: { name: string; labels?: Record<string, string> }; timestamp: string; window: string; containers: { name: string; usage: { cpu: string; memory: string } }[] };
    const m = await eventually(async () => JSON.parse(await s.k(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/burner'])) as PodMetrics, 15_000, 'PodMetrics of burner');
    assert.equal(m.kind, 'PodMetrics');
    assert.deepEqual(m.metadata.labels, { app: 'burn' });
    assert.match(m.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.match(m.window, /^\d+(\.\d+)?s$/);
    assert.equal(m.containers[0]!.name, 'main');
    assert.match(m.containers[0]!.usage.cpu, /^(\d+[num]?|0)$/);
    assert.match(m.containers[0]!.usage.memory, /^\d+(Ki|Mi)?$/);
    const list = JSON.parse(await s.k(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Didle'])) as { kind: string; items: PodMetrics[] };
    assert.equal(list.kind, 'PodMetricsList');
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['sleeper']);
    assert.match(await s.k(['get', 'podmetrics', 'burner']), /^NAME\s+CPU\s+MEMORY\s+WINDOW\nburner\s+\d+[nm]?\s+\d+Ki\s+\d+(\.\d+)?m?s\n$/);
    const missing = await s.kubectl(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /pods "default\/nope" not found/);
    const nodes = JSON.parse(await s.k(['get', '--raw', '/apis/metrics.k8s.io/v1beta1/nodes'])) as { items: { metadata: { name: string }; usage: { cpu: string; memory: string } }[] };
    assert.ok(nodes.items.some((n) => n.metadata.name === NODE));
  });

  it('kubectl top pods and nodes show figures that follow the load', async () => {
    // A busy loop gets a good part of a core even on a busy shared machine (at least a tenth); a sleeping shell next to nothing.
    const busy = await eventually(async () => {
      const out = await s.k(['top', 'pods']);
      const burn = cpuMillis(out, 'burner');
      const idle = cpuMillis(out, 'sleeper');
      return burn !== undefined && idle !== undefined && burn >= 100 && idle <= 20 ? out : undefined;
    }, 20_000, 'kubectl top pods: burner busy, sleeper idle');
    assert.match(busy, /^NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    const containers = await s.k(['top', 'pod', 'burner', '--containers']);
    assert.match(containers, /^POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/);
    assert.match(containers, /^burner\s+main\s+\d+m\s+\d+Mi/m);
    // The oldest and newest kubectl skiff supports read the same answers.
    for (const version of ['1.27', '1.33']) assert.match(await s.k(['top', 'pods', '--no-headers'], { version }), /^burner\s+\d+m\s+\d+Mi/m, `kubectl ${version}`);
    const selected = await s.k(['top', 'pods', '-l', 'app=idle', '-A']);
    assert.match(selected, /^default\s+sleeper\s+\d+m\s+\d+Mi/m);
    assert.doesNotMatch(selected, /burner/);
    const nodes = await s.k(['top', 'nodes']);
    assert.match(nodes, /^NAME\s+CPU\(cores\)\s+CPU(\(%\)|%)\s+MEMORY\(bytes\)\s+MEMORY(\(%\)|%)/);
    assert.ok((cpuMillis(nodes, NODE) ?? 0) >= 100, `the node carries the loop:\n${nodes}`);
    // The loop ends: within a scrape or two its figure falls to an idle shell's.
    writeFileSync(stopFile, '');
    await eventually(async () => (cpuMillis(await s.k(['top', 'pods']), 'burner') ?? Infinity) <= 20, 20_000, 'kubectl top pods: burner idle again');
    assert.ok(existsSync(stopFile));
  });

  it("a skiff sim fleet's nodes and pods have figures made from the pods' requests, scraping nothing", async () => {
    fleet = startProcess({
      name: 'sim',
      command: process.execPath,
      args: [SKIFF_BIN, 'sim', '--kubeconfig', s.kubeconfig, '--nodes', '3', '--name-prefix', 'topsim', '--data-dir', join(scratch, 'sim'), '--log-format', 'json'],
      output: join(scratch, 'sim.log'),
    });
    await eventually(async () => (await s.k(['get', 'nodes', '-l', 'skiff.dev/simulated-by=topsim', '--no-headers'])).split('\n').filter((l) => /\sReady\s/.test(l)).length === 3, 30_000, 'three simulated nodes Ready');
    await s.k(['create', 'deployment', 'simweb', '--image=nginx', '--replicas=3']);
    await s.k(['set', 'resources', 'deployment', 'simweb', '--requests=cpu=200m,memory=64Mi']);
    await s.k(['patch', 'deployment', 'simweb', '-p', JSON.stringify({ spec: { template: { spec: { nodeSelector: { 'skiff.dev/simulated-by': 'topsim' } } } } })]);
    const pods = await eventually(async () => {
      const out = await s.k(['top', 'pods', '-l', 'app=simweb', '--no-headers']);
      const rows = out.split('\n').filter(Boolean).map((l) => l.split(/\s+/));
      // 30–70 % of the 200m and 64Mi each asked for.
      return rows.length === 3 && rows.every((r) => Number(r[1]!.replace(/m$/, '')) >= 60 && Number(r[1]!.replace(/m$/, '')) <= 140 && /^\d+Mi$/.test(r[2]!)) ? rows : undefined;
    }, 30_000, 'kubectl top pods of the fleet');
    assert.equal(pods.length, 3);
    const nodes = await s.k(['top', 'nodes', '-l', 'skiff.dev/simulated-by=topsim', '--no-headers']);
    assert.equal(nodes.split('\n').filter((l) => /^topsim-\d\s+\d+m\s+\d+%\s+\d+Mi\s+\d+%/.test(l)).length, 3, nodes);
    assert.doesNotMatch(s.logs(), /could not scrape resource metrics from the node","node":"topsim/, 'the fleet is not scraped');
  });
});
