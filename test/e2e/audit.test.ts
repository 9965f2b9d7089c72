// The audit trail as an operator meets it: a real server started with upstream's audit flags,
// kubectl's requests found in the log (who deleted that Node), denials with the authorization
// decision, a watch's two stages, omitted stages and level None, rotation, a bad policy refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestServer, runSkiff } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import type { AuditEvent } from '../../src/apiserver/audit/event.js';

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
rules:
  # Nobody wants every ConfigMap read: level None.
  - level: None
    resources: [{group: "", resources: ["configmaps"]}]
  # Secrets without their RequestReceived event (omitStages).
  - level: Metadata
    omitStages: [RequestReceived]
    resources: [{group: "", resources: ["secrets"]}]
  - level: RequestResponse
    resources: [{group: "", resources: ["nodes"]}]
  - level: Metadata
`;

function events(path: string): AuditEvent[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
}

describe('audit log', () => {
  const s = new TestServer('audit');
  const logPath = join(s.dataDir, 'audit.log');
  const policyPath = join(s.dataDir, 'audit-policy.yaml');
  /** The events of one request, by the Audit-Id kubectl was answered with. */
  const byId = (id: string): AuditEvent[] => events(logPath).filter((e) => e.auditID === id);

  before(async () => {
    writeFileSync(policyPath, POLICY);
    await s.start(['--audit-policy-file', policyPath, '--audit-log-path', logPath]);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('kubectl delete node: the admin user, verb delete, the Node, 200, the object at RequestResponse; Audit-Id names the events', async () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'audited-node', labels: { role: 'test' } } };
    await s.k(['create', '-f', '-'], { input: JSON.stringify(node) });
    const uid = (await s.k(['get', 'node', 'audited-node', '-o', 'jsonpath={.metadata.uid}'])).trim();
    // -v=8 prints the response headers: the Audit-Id kube-apiserver answers every request with.
    const del = await s.kubectl(['delete', 'node', 'audited-node', '-v=8']);
    assert.equal(del.code, 0, del.stderr);
    const ids = [...del.stderr.matchAll(/DELETE https:\/\/\S+\/api\/v1\/nodes\/audited-node[\s\S]*?Audit-Id: ([0-9a-f-]{36})/gi)].map((m) => m[1]!);
    assert.equal(ids.length, 1, 'the DELETE answer carried an Audit-Id');
    const id = ids[0]!;
    await eventually(() => byId(id).some((e) => e.stage === 'ResponseComplete'), 10_000, 'the delete in the audit log');
    const evs = byId(id);
    assert.deepEqual(evs.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
    const done = evs[1]!;
    assert.equal(done.kind, 'Event');
    assert.equal(done.apiVersion, 'audit.k8s.io/v1');
    assert.equal(done.level, 'RequestResponse');
    assert.equal(done.verb, 'delete');
    assert.equal(done.requestURI, '/api/v1/nodes/audited-node');
    assert.equal(done.user.username, 'skiff-admin');
    assert.ok(done.user.groups?.includes('system:masters'), JSON.stringify(done.user));
    assert.deepEqual(done.objectRef, { resource: 'nodes', name: 'audited-node', apiVersion: 'v1' });
    assert.deepEqual(done.responseStatus, { metadata: {}, code: 200 });
    assert.ok(done.sourceIPs?.includes('127.0.0.1'), JSON.stringify(done.sourceIPs));
    assert.match(done.userAgent ?? '', /^kubectl/);
    assert.deepEqual(done.annotations, { 'authorization.k8s.io/decision': 'allow', 'authorization.k8s.io/reason': '' });
    // kubectl sends DeleteOptions; the answer is the deleted Node.
    assert.equal((done.requestObject as { kind?: string }).kind, 'DeleteOptions');
    assert.equal((done.responseObject as { metadata?: { uid?: string } }).metadata?.uid, uid);
    assert.match(done.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(done.stageTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(evs[0]!.stageTimestamp, evs[0]!.requestReceivedTimestamp, 'RequestReceived is stamped with the arrival');
    assert.ok(done.stageTimestamp >= done.requestReceivedTimestamp);
    // The create is there too, with the name the body gave it.
    const created = events(logPath).find((e) => e.verb === 'create' && e.objectRef?.resource === 'nodes' && e.stage === 'ResponseComplete');
    assert.equal(created?.objectRef?.name, 'audited-node');
    assert.equal(created?.responseStatus?.code, 201);
    assert.equal((created?.requestObject as { metadata?: { labels?: Record<string, string> } }).metadata?.labels?.role, 'test');
  });

  it('a denied request: 403 with the Status fields, the forbid decision, and who was impersonated', async () => {
    const r = await s.kubectl(['--as=jane', 'get', 'pods', '-n', 'default']);
    assert.equal(r.code, 1);
    await eventually(() => events(logPath).some((e) => e.impersonatedUser?.username === 'jane' && e.stage === 'ResponseComplete'), 10_000, 'the denial logged');
    const denied = events(logPath).find((e) => e.impersonatedUser?.username === 'jane' && e.stage === 'ResponseComplete')!;
    assert.equal(denied.user.username, 'skiff-admin', 'user is who authenticated; impersonatedUser whom they acted as');
    assert.ok(denied.impersonatedUser?.groups?.includes('system:authenticated'));
    assert.equal(denied.verb, 'list');
    assert.deepEqual(denied.objectRef, { resource: 'pods', namespace: 'default', apiVersion: 'v1' });
    assert.equal(denied.level, 'Metadata');
    assert.equal(denied.responseStatus?.code, 403);
    assert.equal(denied.responseStatus?.status, 'Failure');
    assert.equal(denied.responseStatus?.reason, 'Forbidden');
    assert.match(denied.responseStatus?.message ?? '', /pods is forbidden: User "jane" cannot list resource "pods"/);
    assert.equal(denied.annotations?.['authorization.k8s.io/decision'], 'forbid');
    assert.equal(denied.responseObject, undefined, 'no response object at Metadata');
  });

  it('a watch: RequestReceived, ResponseStarted when its stream starts, ResponseComplete when it ends', async () => {
    const r = await s.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods?watch=true&timeoutSeconds=1']);
    assert.equal(r.code, 0, r.stderr);
    const stagesOf = () => events(logPath).filter((e) => e.verb === 'watch' && e.requestURI.includes('timeoutSeconds=1') && e.user.username === 'skiff-admin');
    await eventually(() => stagesOf().some((e) => e.stage === 'ResponseComplete'), 10_000, 'the watch complete').catch((e: unknown) => {
      throw new Error(`${String(e)}: ${JSON.stringify(events(logPath).filter((ev) => ev.verb === 'watch').slice(-6))}`);
    });
    const w = stagesOf();
    assert.deepEqual(w.map((e) => e.stage), ['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    assert.equal(new Set(w.map((e) => e.auditID)).size, 1);
    assert.equal(w[1]!.responseStatus?.code, 200);
    assert.ok(w[2]!.stageTimestamp > w[1]!.stageTimestamp, 'complete after the stream ran its second');
  });

  it('level None logs nothing; a rule\'s omitStages leaves that stage out', async () => {
    await s.k(['create', 'configmap', 'unaudited', '-n', 'default', '--from-literal=a=b']);
    await s.k(['create', 'secret', 'generic', 'half-audited', '-n', 'default', '--from-literal=a=b']);
    await eventually(() => events(logPath).some((e) => e.objectRef?.name === 'half-audited' && e.stage === 'ResponseComplete'), 10_000, 'the secret create logged');
    assert.equal(events(logPath).filter((e) => e.objectRef?.resource === 'configmaps').length, 0);
    const secret = events(logPath).filter((e) => e.objectRef?.name === 'half-audited');
    assert.deepEqual(secret.map((e) => e.stage), ['ResponseComplete']);
    assert.equal(secret[0]!.requestObject, undefined, 'Metadata: no request object (the secret\'s data stays out of the log)');
  });

  it('a clean stop writes every event: the last request before it is in the log', async () => {
    await s.k(['label', 'namespace', 'default', 'last=before-stop']);
    await s.stop();
    const last = events(logPath).filter((e) => e.verb === 'patch' && e.objectRef?.resource === 'namespaces' && e.objectRef.name === 'default');
    assert.deepEqual(last.map((e) => e.stage), ['RequestReceived', 'ResponseComplete']);
    await s.start(['--audit-policy-file', policyPath, '--audit-log-path', logPath]);
  });
});

describe('audit log rotation and a policy refused at start', () => {
  const s = new TestServer('audit-rotate');
  const logPath = join(s.dataDir, 'audit', 'api.log');
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('rotates by size and keeps at most --audit-log-maxbackup backups', async () => {
    const policy = join(s.dataDir, 'policy.yaml');
    writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  users: [skiff-admin]\n  resources: [{group: "", resources: [configmaps]}]\n');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(s.dataDir, 'audit'));
    await s.start(['--audit-policy-file', policy, '--audit-log-path', logPath, '--audit-log-maxsize', '1', '--audit-log-maxbackup', '2']);
    // A 400 KB ConfigMap read again and again: each read's event carries it whole.
    await s.k(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big', namespace: 'default' }, data: { data: 'x'.repeat(400_000) } }) });
    const client = s.client();
    try {
      for (let i = 0; i < 20; i++) await client.get('/api/v1/namespaces/default/configmaps/big');
    } finally {
      client.close();
    }
    const backups = (): string[] => readdirSync(join(s.dataDir, 'audit')).filter((f) => f !== 'api.log');
    await eventually(() => backups().length === 2 && events(logPath).length > 0, 10_000, 'rotated twice or more, two backups kept');
    for (const b of backups()) assert.match(b, /^api-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}\.log$/);
    for (const f of readdirSync(join(s.dataDir, 'audit'))) assert.ok(readFileSync(join(s.dataDir, 'audit', f)).length <= 1024 * 1024 + 900_000, `${f}: rotated near 1 MB`);
  });

  it('a bad policy stops the start with one line naming the file and the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-bad-'));
    try {
      const bad = join(dir, 'policy.yaml');
      writeFileSync(bad, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n');
      const r = await runSkiff(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0', '--audit-policy-file', bad, '--audit-log-path', join(dir, 'a.log')], { timeoutMs: 20_000 });
      assert.equal(r.code, 2);
      assert.equal(r.stderr.trim(), `skiff server: --audit-policy-file ${bad}: rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a log path that cannot be opened for writing (here a directory) stops the start with one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'audit-path-'));
    try {
      const policy = join(dir, 'policy.yaml');
      writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
      const r = await runSkiff(['server', '--data-dir', join(dir, 'data'), '--listen', '127.0.0.1:0', '--audit-policy-file', policy, '--audit-log-path', dir], { timeoutMs: 20_000 });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stderr.trim(), `skiff server: --audit-log-path ${dir}: cannot write there (EISDIR)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
