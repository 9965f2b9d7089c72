// API Priority and Fairness end to end: a real server, real agents, real kubectl. Three ordinary
// users flood the API with hundreds of concurrent list, create and watch loops; an administrator
// has tightened their priority level with kubectl (as one would on a busy cluster), so many of
// their calls get 429. Meanwhile every node stays Ready, and a Deployment created during the
// flood rolls out: node heartbeats, the agents' pod status and the controllers have seats of
// their own. Nothing here is timed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TestServer, TestAgent, TEST_JOIN_TOKEN, eventually } from '../support/cluster.js';
import { Informer } from '../../src/client/informer.js';
import { silentLogger } from '../../src/util/log.js';
import type { Node } from '../../src/api/kinds/node.js';
import type { KubeObject } from '../../src/api/types.js';
import { flood } from '../../bench/lib/flood.js';

const USERS = ['u1', 'u2', 'u3'].map((name) => ({ name, token: `flood-token-${name}`, namespace: `flood-${name}` }));

describe('a flood from ordinary users', () => {
  const s = new TestServer('flood');
  const agents = ['node-1', 'node-2'].map((n) => new TestAgent(s, n));
  before(async () => {
    const tokens = join(s.dataDir, 'tokens.csv');
    writeFileSync(tokens, USERS.map((u, i) => `${u.token},${u.name},${100 + i},"flooders"`).join('\n') + '\n');
    // Limits and the Event TTL through the flags, as an operator sets them (upstream's flag names).
    await s.start(['--token', TEST_JOIN_TOKEN, '--token-auth-file', tokens, '--node-monitor-period', '500ms', '--node-monitor-grace-period', '8s', '--max-requests-inflight', '300', '--max-mutating-requests-inflight', '190', '--event-ttl', '3s']);
    await Promise.all(agents.map((a) => a.start(['--runtime', 'simulated'])));
    await s.k(['create', 'clusterrolebinding', 'flooders-edit', '--clusterrole', 'edit', '--group', 'flooders']);
    for (const u of USERS) await s.k(['create', 'namespace', u.namespace]);
  });
  after(async () => {
    for (const a of agents) await a.stop().catch(() => {});
    await s.stop();
    s.cleanup();
  });

  it('is refused with 429 while every node stays Ready and a Deployment rolls out', async () => {
    // The suggested levels follow the server's defaults until told not to; then the tightened queues stick.
    assert.match(await s.k(['get', 'flowschemas']), /global-default\s+global-default\s+9900\s+ByUser/);
    await s.k(['annotate', '--overwrite', 'prioritylevelconfiguration', 'global-default', 'apf.kubernetes.io/autoupdate-spec=false']);
    await s.k(['patch', 'prioritylevelconfiguration', 'global-default', '--type', 'merge', '-p', JSON.stringify({ spec: { limited: { limitResponse: { queuing: { queues: 16, handSize: 2, queueLengthLimit: 10 } } } } })]);
    assert.match(await s.k(['get', 'prioritylevelconfiguration', 'global-default']), /global-default\s+Limited\s+20\s+16\s+2\s+10/);

    const admin = s.client();
    const abort = new AbortController();
    const notReady: string[] = [];
    const nodes = new Informer<Node>(admin, { path: '/api/v1/nodes', log: silentLogger(), readOnly: true });
    const check = (n: Node): void => {
      const ready = n.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status !== 'True') notReady.push(`${n.metadata.name}: ${ready?.status ?? 'none'} ${ready?.reason ?? ''}`);
    };
    nodes.addHandlers({ add: check, update: (_o, n) => check(n) });
    void nodes.run(abort.signal);
    try {
      const ca = readFileSync(join(s.dataDir, 'tls', 'ca.crt'), 'utf8');
      const flooding = flood({ server: agents[0]!.serverUrl, caPem: ca, users: USERS, loops: { list: 30, create: 20, watch: 20 }, durationMs: 15_000 });
      await s.k(['create', 'deployment', 'during-flood', '--image', 'registry.example/app:1', '--replicas', '2']);
      const outcome = await flooding;
      assert.ok((outcome.byCode[429] ?? 0) > 0, `the flood was refused in part: ${JSON.stringify(outcome.byCode)}`);
      assert.ok((outcome.byCode[200] ?? 0) + (outcome.byCode[201] ?? 0) > 0, `and served in part: ${JSON.stringify(outcome.byCode)}`);
      assert.ok(!Object.keys(outcome.byCode).some((c) => Number(c) >= 500), `no server errors: ${JSON.stringify(outcome.byCode)}`);
      await eventually(async () => ((await admin.get<KubeObject>('/apis/apps/v1/namespaces/default/deployments/during-flood')).status as { readyReplicas?: number } | undefined)?.readyReplicas === 2, 30_000, 'the Deployment created during the flood to roll out');
      assert.deepEqual(notReady, [], 'no node left Ready');
      const metrics = await admin.get<string>('/metrics', { accept: 'text/plain' });
      assert.match(metrics, /apiserver_flowcontrol_rejected_requests_total\{flow_schema="global-default",priority_level="global-default",reason="(queue-full|time-out)"\} [1-9]/);
      assert.doesNotMatch(metrics, /apiserver_flowcontrol_rejected_requests_total\{flow_schema="system-node/, "nodes' calls were never refused");
      assert.match(metrics, /apiserver_flowcontrol_dispatched_requests_total\{flow_schema="system-node-high",priority_level="node-high"\} [1-9]/);
      // 300 + 190 seats shared by nominalConcurrencyShares (20 of 245 for global-default).
      assert.match(metrics, new RegExp(`apiserver_flowcontrol_nominal_limit_seats\\{priority_level="global-default"\\} ${Math.ceil((490 * 20) / 245)}\n`));
    } finally {
      abort.abort();
      admin.close();
    }
  });

  it('deletes Events --event-ttl after their last write', async () => {
    const now = new Date().toISOString();
    await s.k(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'short-lived', namespace: 'default' }, involvedObject: { kind: 'Node', name: 'node-1' }, reason: 'Testing', message: 'gone in 3 s', type: 'Normal', firstTimestamp: now, lastTimestamp: now, count: 1 }) });
    await eventually(async () => (await s.kubectl(['get', 'event', 'short-lived', '-n', 'default'])).code !== 0, 20_000, 'the Event to expire');
  });
});
