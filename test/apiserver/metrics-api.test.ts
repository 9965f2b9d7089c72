import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MetricsApi } from '../../src/apiserver/metrics-api/metrics-api.js';
import { MetricsStorage } from '../../src/apiserver/metrics-api/metrics-storage.js';
import type { ResourceRequest } from '../../src/apiserver/http/request-info.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';

const T0 = Date.parse('2026-12-01T00:00:00Z');

function pod(name: string, nodeName: string, labels: Record<string, string> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', uid: `uid-${name}`, labels },
    spec: { nodeName, containers: [{ name: 'main', image: 'x', resources: { requests: { cpu: '1', memory: '100Mi' } } }] },
    status: { phase: 'Running', containerStatuses: [{ name: 'main', ready: true, restartCount: 0, image: 'x', imageID: '', state: { running: { startedAt: '2026-11-30T00:00:00Z' } } }] },
  } as Pod;
}

function node(name: string, simulated: boolean): KubeObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, ...(simulated ? { 'skiff.dev/runtime': 'simulated' } : {}) } } };
}

function scrape(podName: string, t: number, cpuSeconds: number, memory: number) {
  return { node: { timestampMs: t, cpuCoreNanoSeconds: cpuSeconds * 4e9, memoryWorkingSetBytes: 2 ** 30 }, containers: [{ namespace: 'default', pod: podName, container: 'main', timestampMs: t, cpuCoreNanoSeconds: cpuSeconds * 1e9, memoryWorkingSetBytes: memory, startedAtMs: T0 - 60_000 }] };
}

function req(resource: 'pods' | 'nodes', verb: 'get' | 'list' | 'watch', name?: string, namespace?: string): ResourceRequest {
  return { kind: 'resource', verb, group: 'metrics.k8s.io', version: 'v1beta1', resource, ...(name ? { name } : {}), ...(namespace ? { namespace } : {}) };
}

describe('metrics.k8s.io served from scrapes and from simulated nodes', () => {
  const storage = new MetricsStorage();
  const nodes = [node('real', false), node('sim', true)];
  const pods = [pod('web', 'real', { app: 'web' }), pod('sim-pod', 'sim', { app: 'sim' })];
  const api = new MetricsApi({
    now: () => T0 + 30_000,
    storage,
    resolutionMs: 15_000,
    nodes: () => nodes,
    node: (n) => nodes.find((x) => x.metadata.name === n),
    pods: () => pods,
    pod: (ns, n) => pods.find((p) => p.metadata.namespace === ns && p.metadata.name === n),
    simulated: (n) => n.metadata.labels?.['skiff.dev/runtime'] === 'simulated',
  });
  const notFound = (f: () => unknown, message: string) => assert.throws(f, (e: unknown) => isStatusError(e) && e.code === 404 && e.message === message);

  it('a scraped pod has figures after two scrapes: its rate over the window between them', () => {
    storage.store('real', scrape('web', T0, 10, 5 * 2 ** 20), T0);
    notFound(() => api.answer(req('pods', 'get', 'web', 'default'), new URLSearchParams()), 'podmetrics.metrics.k8s.io "default/web" not found');
    storage.store('real', scrape('web', T0 + 15_123, 13.0369, 5 * 2 ** 20 + 4096), T0 + 15_123);
    const m = api.answer(req('pods', 'get', 'web', 'default'), new URLSearchParams()) as unknown as Record<string, unknown>;
    assert.deepEqual(m, {
      apiVersion: 'metrics.k8s.io/v1beta1',
      kind: 'PodMetrics',
      metadata: { name: 'web', namespace: 'default', creationTimestamp: '2026-12-01T00:00:30Z', labels: { app: 'web' } },
      timestamp: '2026-12-01T00:00:15Z',
      window: '15.123s',
      containers: [{ name: 'main', usage: { cpu: '200813331n', memory: '5124Ki' } }],
    });
  });

  it('nodes: scraped ones from their counters, simulated ones from their pods’ requests', () => {
    const list = api.answer(req('nodes', 'list'), new URLSearchParams()) as unknown as { kind: string; items: { metadata: { name: string }; window: string; usage: { cpu: string; memory: string } }[] };
    assert.equal(list.kind, 'NodeMetricsList');
    assert.deepEqual(list.items.map((i) => i.metadata.name), ['real', 'sim']);
    assert.equal(list.items[0]!.usage.memory, '1Gi');
    assert.equal(list.items[1]!.window, '15s');
    const simCpu = Number(list.items[1]!.usage.cpu.replace(/n$/, ''));
    assert.ok(simCpu >= 50e6 + 300e6 && simCpu <= 50e6 + 700e6, `the node's own 50m and 30–70 % of the pod's 1 CPU: ${simCpu}`);
    const selected = api.answer(req('nodes', 'list'), new URLSearchParams({ labelSelector: 'skiff.dev/runtime=simulated' })) as unknown as { items: { metadata: { name: string } }[] };
    assert.deepEqual(selected.items.map((i) => i.metadata.name), ['sim']);
  });

  it('pods across namespaces, by label and field selectors', () => {
    const names = (q: Record<string, string>) => (api.answer(req('pods', 'list'), new URLSearchParams(q)) as unknown as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    assert.deepEqual(names({}), ['sim-pod', 'web']);
    assert.deepEqual(names({ labelSelector: 'app=sim' }), ['sim-pod']);
    assert.deepEqual(names({ fieldSelector: 'metadata.name=web' }), ['web']);
    assert.throws(() => names({ labelSelector: 'app in (' }), (e: unknown) => isStatusError(e) && e.code === 400);
  });

  it('list items carry no kind; a Table as metrics-server prints one: name, cpu, memory (a pod’s summed), window', () => {
    const list = api.answer(req('pods', 'list'), new URLSearchParams()) as unknown as { items: Record<string, unknown>[] };
    assert.equal(list.items[0]!.kind, undefined);
    assert.equal(list.items[0]!.apiVersion, undefined);
    const table = api.answer(req('pods', 'get', 'web', 'default'), new URLSearchParams(), 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json') as unknown as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string } }[];
    };
    assert.equal(table.kind, 'Table');
    assert.deepEqual(table.columnDefinitions.map((c) => c.name), ['Name', 'cpu', 'memory', 'Window']);
    assert.deepEqual(table.rows[0]!.cells, ['web', '200813331n', '5124Ki', '15.123s']);
    assert.equal(table.rows[0]!.object.kind, 'PartialObjectMetadata');
  });

  it('NotFound as metrics-server words it; writes and watches are not allowed', () => {
    notFound(() => api.answer(req('pods', 'get', 'nope', 'default'), new URLSearchParams()), 'pods "default/nope" not found');
    notFound(() => api.answer(req('nodes', 'get', 'nope'), new URLSearchParams()), 'nodes "nope" not found');
    assert.throws(() => api.answer(req('pods', 'watch'), new URLSearchParams()), (e: unknown) => isStatusError(e) && e.code === 405);
  });

  it('a pod gone from its node’s scrape has no figures any more', () => {
    storage.store('real', { containers: [] }, T0 + 30_000);
    notFound(() => api.answer(req('pods', 'get', 'web', 'default'), new URLSearchParams()), 'podmetrics.metrics.k8s.io "default/web" not found');
  });
});
