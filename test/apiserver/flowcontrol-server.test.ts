// Priority and Fairness in a real server: a user whose level is full waits in its queue and then
// gets a 429 with Retry-After and the X-Kubernetes-PF-* headers, while a node's heartbeats and the
// administrator go on; FlowSchemas and PriorityLevelConfigurations are served and honoured; with
// Priority and Fairness off, the plain in-flight limits answer 429 at once and skiff's client
// waits the Retry-After and sends again, as client-go does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { StaticTokens } from '../../src/auth/static-tokens.js';
import { ApiClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeObject } from '../../src/api/types.js';
import { microTime } from '../../src/util/time.js';

const TOKENS = 'alice-token,alice,1\nbob-token,bob,2\nnode-token,system:node:n1,3,"system:nodes"\n';

interface Answer {
  code: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A request as any HTTP client sends it (no retries). */
function call(srv: InProcessServer, token: string, method: string, path: string, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.request(`${srv.url}${path}`, { method, ca: srv.adminTls.ca, headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A create whose body arrives only when `finish` is called: it holds its seat all that time (flow
 * control admits a request before its body is read, as upstream's filter does).
 */
function slowCreate(srv: InProcessServer, token: string, name: string): { finish(): void; answer: Promise<Answer> } {
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } });
  let req!: ReturnType<typeof https.request>;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = https.request(
      `${srv.url}/api/v1/namespaces/default/configmaps`,
      { method: 'POST', ca: srv.adminTls.ca, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
  });
  return { finish: () => req.end(body.slice(10)), answer };
}

async function grantAll(srv: InProcessServer, ...users: string[]): Promise<void> {
  await srv.client().create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'flood-edit' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: users.map((name) => ({ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name })),
  });
}

async function waitFor(what: string, check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('a full priority level queues, then answers 429 with Retry-After; nodes and admins go on', async () => {
  // 6 seats in all: global-default gets ceil(6*20/245) = 1, node-high 1; a queued request waits 400 ms at most.
  const srv = await startInProcessServer({
    tokenAuthenticators: [StaticTokens.parse(TOKENS)],
    flowControl: { maxRequestsInflight: 4, maxMutatingRequestsInflight: 2, maxQueueWaitMs: 400 },
  });
  try {
    await grantAll(srv, 'alice', 'bob');
    const admin = srv.client();
    const schema = await admin.get<KubeObject>('/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/global-default');
    const level = await admin.get<KubeObject>('/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/global-default');

    // A plain request says where it was classified.
    const ok = await call(srv, 'alice-token', 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(ok.code, 200);
    assert.equal(ok.headers['x-kubernetes-pf-flowschema-uid'], schema.metadata.uid);
    assert.equal(ok.headers['x-kubernetes-pf-prioritylevel-uid'], level.metadata.uid);

    const held = slowCreate(srv, 'alice-token', 'held');
    await waitFor('the held request to take its seat', async () => (await metricValue(admin, 'apiserver_flowcontrol_current_executing_seats{priority_level="global-default"}')) === 1);

    // Bob shares the level: he waits his turn, then is refused.
    const started = Date.now();
    const refused = await call(srv, 'bob-token', 'GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(refused.code, 429);
    assert.ok(Date.now() - started >= 350, 'it waited in its queue first');
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal(refused.headers['x-kubernetes-pf-flowschema-uid'], schema.metadata.uid);
    const status = JSON.parse(refused.body) as { kind: string; code: number; reason: string; message: string; details?: { retryAfterSeconds?: number } };
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, 429);
    assert.equal(status.reason, 'TooManyRequests');
    assert.equal(status.message, 'Too many requests, please try again later.');
    assert.equal(status.details?.retryAfterSeconds, 1);

    // Meanwhile the node's heartbeat has seats of its own, and the administrator is never limited.
    const node = new ApiClient({ servers: [srv.url], caPem: srv.adminTls.ca, token: 'node-token', timeoutMs: 5_000 });
    try {
      const now = microTime(Date.now());
      const lease = await node.create<KubeObject>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'n1' }, spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: now } });
      // Renewed while global-default's one seat is still held: they do not wait behind it.
      for (let i = 0; i < 5; i++) {
        lease.spec = { ...(lease.spec as object), renewTime: microTime(Date.now()) };
        Object.assign(lease, await node.replace<KubeObject>('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1', lease));
      }
      assert.equal(await metricValue(admin, 'apiserver_flowcontrol_current_executing_seats{priority_level="global-default"}'), 1, 'the seat was held all along');
    } finally {
      node.close();
    }
    assert.ok(await admin.get('/api/v1/namespaces/default'));

    held.finish();
    assert.equal((await held.answer).code, 201);
    const rejected = await metricValue(admin, 'apiserver_flowcontrol_rejected_requests_total{flow_schema="global-default",priority_level="global-default",reason="time-out"}');
    assert.equal(rejected, 1);
    // Once the seat is free, Bob is served again.
    assert.equal((await call(srv, 'bob-token', 'GET', '/api/v1/namespaces/default/configmaps')).code, 200);
  } finally {
    await srv.stop();
  }
});

test('FlowSchemas written by an administrator are honoured at once, and a dangling one is marked', async () => {
  const srv = await startInProcessServer({
    tokenAuthenticators: [StaticTokens.parse(TOKENS)],
    flowControl: { maxRequestsInflight: 4, maxMutatingRequestsInflight: 2, maxQueueWaitMs: 200 },
  });
  try {
    await grantAll(srv, 'alice');
    const admin = srv.client();
    const base = '/apis/flowcontrol.apiserver.k8s.io/v1';
    // A level of its own for alice that refuses rather than queues.
    await admin.create(`${base}/prioritylevelconfigurations`, { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'alice-only' }, spec: { type: 'Limited', limited: { nominalConcurrencyShares: 1, limitResponse: { type: 'Reject' } } } });
    const fs = await admin.create<KubeObject>(`${base}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 'alice' },
      spec: { priorityLevelConfiguration: { name: 'alice-only' }, matchingPrecedence: 500, distinguisherMethod: { type: 'ByUser' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }] }] },
    });
    assert.equal((fs.spec as { matchingPrecedence: number }).matchingPrecedence, 500);
    const hers = '/api/v1/namespaces/default/configmaps';
    await waitFor('alice to be classified by her schema', async () => (await call(srv, 'alice-token', 'GET', hers)).headers['x-kubernetes-pf-flowschema-uid'] === fs.metadata.uid);
    await waitFor('its Dangling condition', async () => {
      const live = await admin.get<KubeObject>(`${base}/flowschemas/alice`);
      return (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'False') === true;
    });
    const held = slowCreate(srv, 'alice-token', 'held');
    await waitFor('the seat to be taken', async () => (await metricValue(admin, 'apiserver_flowcontrol_current_executing_seats{priority_level="alice-only"}')) === 1);
    const refused = await call(srv, 'alice-token', 'GET', hers);
    assert.equal(refused.code, 429, 'a Reject level refuses at once');
    assert.equal(await metricValue(admin, 'apiserver_flowcontrol_rejected_requests_total{flow_schema="alice",priority_level="alice-only",reason="concurrency-limit"}'), 1);
    held.finish();
    await held.answer;

    // Its level deleted: the schema dangles and takes nothing; alice falls back to global-default.
    await admin.delete(`${base}/prioritylevelconfigurations/alice-only`);
    await waitFor('the schema to be marked dangling', async () => {
      const live = await admin.get<KubeObject>(`${base}/flowschemas/alice`);
      return (live.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.some((c) => c.type === 'Dangling' && c.status === 'True') === true;
    });
    const globalDefault = await admin.get<KubeObject>(`${base}/flowschemas/global-default`);
    assert.equal((await call(srv, 'alice-token', 'GET', hers)).headers['x-kubernetes-pf-flowschema-uid'], globalDefault.metadata.uid);

    // Bad objects are refused with the fields named.
    await assert.rejects(
      admin.create(`${base}/prioritylevelconfigurations`, { apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'PriorityLevelConfiguration', metadata: { name: 'bad' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 2, handSize: 4 } } } } }),
      (e: unknown) => isStatusError(e, 'Invalid') && /handSize/.test(e.message),
    );
  } finally {
    await srv.stop();
  }
});

test('with Priority and Fairness off the plain limit answers 429 at once, and the client sends again after Retry-After', async () => {
  const srv = await startInProcessServer({
    tokenAuthenticators: [StaticTokens.parse(TOKENS)],
    flowControl: { enablePriorityAndFairness: false, maxRequestsInflight: 10, maxMutatingRequestsInflight: 1 },
  });
  try {
    await grantAll(srv, 'alice');
    const held = slowCreate(srv, 'alice-token', 'held');
    await waitFor('the write slot to be taken', async () => (await call(srv, 'alice-token', 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } }))).code === 429);
    const refused = await call(srv, 'alice-token', 'POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
    assert.equal(refused.code, 429);
    assert.equal(refused.headers['retry-after'], '1');
    // Reads have their own limit.
    assert.equal((await call(srv, 'alice-token', 'GET', '/api/v1/namespaces/default/configmaps')).code, 200);

    const alice = new ApiClient({ servers: [srv.url], caPem: srv.adminTls.ca, token: 'alice-token', timeoutMs: 5_000 });
    try {
      const created = alice.create<KubeObject>('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'patient' } });
      setTimeout(() => held.finish(), 300);
      assert.equal((await created).metadata.name, 'patient', 'refused once, sent again after a second, created');
    } finally {
      alice.close();
    }
    assert.equal((await held.answer).code, 201);
  } finally {
    await srv.stop();
  }
});

/** One sample of the server's /metrics, as an administrator reads it. */
async function metricValue(admin: ApiClient, series: string): Promise<number | undefined> {
  const text = await admin.get<string>('/metrics', { accept: 'text/plain' });
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}
