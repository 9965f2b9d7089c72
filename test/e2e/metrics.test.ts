// /metrics under upstream's names and labels, as a Prometheus user's dashboards and alerts expect
// them: kube-apiserver's request, in-flight, storage and etcd metrics; the controllers' work queues
// and leader election; and on each node, through the API server's node proxy, kubelet-style
// figures and the agent's REST client requests.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TEST_JOIN_TOKEN, TestAgent, TestServer, eventually } from '../support/cluster.js';

/** The value of the sample `name{labels}` whose labels include all of `want`, or undefined. */
function sample(text: string, name: string, want: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(want).every(([k, v]) => labels[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('metrics under upstream names', () => {
  const s = new TestServer('metrics');
  const a = new TestAgent(s, 'metrics-node');
  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN]);
    await a.start();
    await s.k(['run', 'sleeper', '--image=busybox', '--restart=Never', '--overrides', JSON.stringify({ spec: { nodeName: 'metrics-node' } }), '--command', '--', 'sleep', '3600']);
    await eventually(async () => (await s.k(['get', 'pod', 'sleeper', '-o', 'jsonpath={.status.phase}'])) === 'Running', 20_000, 'pod Running');
  });
  after(async () => {
    await a.stop();
    await s.stop();
    s.cleanup();
  });

  it('the API server: requests by verb, scope and code; in-flight; stored objects; storage latency; work queues; leader election', async () => {
    await s.k(['get', 'pods']);
    await s.k(['get', 'pod', 'sleeper']);
    await s.k(['create', 'configmap', 'm1', '--from-literal=a=1']);
    await s.k(['label', 'configmap', 'm1', 'x=y']);
    await s.k(['apply', '--server-side', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m2}\ndata: {a: "1"}\n' });
    await s.k(['create', 'configmap', 'm3', '--dry-run=server']);
    await s.k(['delete', 'configmap', 'm1']);
    await s.kubectl(['get', 'configmap', 'missing']);
    await s.k(['get', '--raw', '/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1']);
    const text = await s.k(['get', '--raw', '/metrics']);
    // In name order, as Prometheus' Go client writes them.
    const names = [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
    assert.deepEqual(names, [...names].sort());
    const req = (labels: Record<string, string>) => sample(text, 'apiserver_request_total', { component: 'apiserver', ...labels }) ?? 0;
    assert.ok(req({ verb: 'LIST', resource: 'pods', scope: 'namespace', code: '200', group: '', version: 'v1' }) >= 1, 'kubectl get pods is a LIST in a namespace');
    assert.ok(req({ verb: 'GET', resource: 'pods', scope: 'resource', code: '200' }) >= 1);
    assert.ok(req({ verb: 'POST', resource: 'configmaps', scope: 'resource', code: '201', dry_run: '' }) >= 1);
    assert.ok(req({ verb: 'POST', resource: 'configmaps', code: '201', dry_run: 'All' }) >= 1, 'dry run is its own label');
    assert.ok(req({ verb: 'PATCH', resource: 'configmaps', code: '200' }) >= 1);
    assert.ok(req({ verb: 'APPLY', resource: 'configmaps' }) >= 1, 'server-side apply is APPLY');
    assert.ok(req({ verb: 'DELETE', resource: 'configmaps', code: '200' }) >= 1);
    assert.ok(req({ verb: 'GET', resource: 'configmaps', code: '404' }) >= 1);
    assert.ok(req({ verb: 'WATCH', resource: 'configmaps', code: '200' }) >= 1);
    assert.ok((sample(text, 'apiserver_request_duration_seconds_count', { verb: 'LIST', resource: 'pods', component: 'apiserver' }) ?? 0) >= 1);
    assert.ok(sample(text, 'apiserver_request_duration_seconds_bucket', { verb: 'LIST', resource: 'pods', le: '60' }) !== undefined, "upstream's buckets");
    for (const kind of ['readOnly', 'mutating']) assert.ok(sample(text, 'apiserver_current_inflight_requests', { request_kind: kind }) !== undefined, kind);
    assert.ok((sample(text, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'pods' }) ?? 0) >= 1, "the agent's pod watch is open");
    assert.equal(sample(text, 'apiserver_storage_objects', { resource: 'pods' }), 1);
    assert.ok((sample(text, 'apiserver_storage_objects', { resource: 'leases.coordination.k8s.io' }) ?? 0) >= 1);
    assert.ok((sample(text, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' }) ?? 0) >= 1);
    assert.ok((sample(text, 'workqueue_adds_total', { name: 'serviceaccounts' }) ?? 0) >= 1);
    assert.ok(sample(text, 'workqueue_depth', { name: 'replicaset' }) !== undefined);
    assert.ok((sample(text, 'workqueue_work_duration_seconds_count', { name: 'serviceaccounts' }) ?? 0) >= 1);
    assert.ok(sample(text, 'workqueue_longest_running_processor_seconds', { name: 'garbage-collector' }) !== undefined);
    assert.equal(sample(text, 'leader_election_master_status', { name: 'skiff-controller-manager' }), 1);
    assert.ok((sample(text, 'rest_client_requests_total', { method: 'POST', code: '201' }) ?? 0) >= 1, "the controllers' own requests");
  });

  it('each node, through /api/v1/nodes/<node>/proxy/metrics: kubelet figures and the agent’s requests', async () => {
    const text = await s.k(['get', '--raw', '/api/v1/nodes/metrics-node/proxy/metrics']);
    assert.equal(sample(text, 'kubelet_node_name', { node: 'metrics-node' }), 1);
    assert.equal(sample(text, 'kubelet_running_pods', {}), 1);
    assert.equal(sample(text, 'kubelet_running_containers', { container_state: 'running' }), 1);
    assert.ok((sample(text, 'kubelet_pod_worker_duration_seconds_count', { operation: 'sync' }) ?? 0) >= 1);
    assert.ok((sample(text, 'rest_client_requests_total', { method: 'PATCH', code: '200' }) ?? 0) >= 1, 'status reports');
    assert.ok((sample(text, 'rest_client_requests_total', { method: 'PUT', code: '200' }) ?? 0) >= 1, 'Lease renewals');
    assert.match(await s.k(['get', '--raw', '/api/v1/nodes/metrics-node/proxy/healthz']), /^ok/);
    const post = await s.kubectl(['create', '--raw', '/api/v1/nodes/metrics-node/proxy/metrics', '-f', '-'], { input: '{}' });
    assert.notEqual(post.code, 0);
    assert.match(post.stderr, /passes only GET/);
  });
});
