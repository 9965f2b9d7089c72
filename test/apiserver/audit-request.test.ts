// What docs/reference/audit.md promises of every request: the Audit-Id header (audited or not, a
// client's own kept), the one event of a failed authentication, and where sourceIPs come from.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { PolicyChecker, parsePolicy } from '../../src/apiserver/audit/policy.js';
import type { AuditEvent } from '../../src/apiserver/audit/event.js';
import type { AuditSink } from '../../src/apiserver/audit/log-backend.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A GET as the admin (or, with `anonymous`, with no credential at all): its status and headers. */
function get(srv: InProcessServer, path: string, headers: Record<string, string> = {}, anonymous = false): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const { ca, cert, key } = srv.adminTls;
  return new Promise((resolve, reject) => {
    const req = request(`${srv.url}${path}`, { ca, ...(anonymous ? {} : { cert, key }), headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Audit-Id without an audit policy', () => {
  let srv: InProcessServer;
  before(async () => {
    srv = await startInProcessServer();
  });
  after(async () => srv.stop());

  it('every answer carries one, a new one each request; a request that brings its own keeps it', async () => {
    const a = await get(srv, '/api/v1/namespaces');
    const b = await get(srv, '/api/v1/namespaces');
    assert.equal(a.status, 200);
    assert.match(String(a.headers['audit-id']), UUID);
    assert.notEqual(a.headers['audit-id'], b.headers['audit-id']);
    assert.equal((await get(srv, '/api/v1/namespaces', { 'Audit-Id': 'from-the-proxy' })).headers['audit-id'], 'from-the-proxy');
    // Refused answers too.
    assert.match(String((await get(srv, '/api/v1/namespaces', {}, true)).headers['audit-id']), UUID);
  });
});

describe('audited requests', () => {
  let srv: InProcessServer;
  const events: AuditEvent[] = [];
  // Events are copied as written: the request goes on changing its event after each stage.
  const sink: AuditSink = { write: (ev) => void events.push(structuredClone(ev)), close: async () => {} };
  before(async () => {
    srv = await startInProcessServer({ audit: { policy: new PolicyChecker(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Metadata}]')), sink } });
  });
  after(async () => srv.stop());

  const eventsOf = (id: string): AuditEvent[] => events.filter((e) => e.auditID === id);

  it("a request's own Audit-Id names its events; times in microseconds, RequestReceived's the arrival", async () => {
    const res = await get(srv, '/api/v1/namespaces/default', { 'Audit-Id': 'proxy-id-1' });
    assert.equal(res.headers['audit-id'], 'proxy-id-1');
    const [received, complete] = eventsOf('proxy-id-1');
    assert.deepEqual([received?.stage, complete?.stage], ['RequestReceived', 'ResponseComplete']);
    assert.match(received!.requestReceivedTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(received!.stageTimestamp, received!.requestReceivedTimestamp);
    assert.equal(complete!.requestReceivedTimestamp, received!.requestReceivedTimestamp);
  });

  it('a failed authentication: one ResponseStarted event, code 401, no user', async () => {
    const res = await get(srv, '/api/v1/namespaces', { 'Audit-Id': 'no-credential' }, true);
    assert.equal(res.status, 401);
    const evs = eventsOf('no-credential');
    assert.equal(evs.length, 1, JSON.stringify(evs));
    assert.equal(evs[0]!.stage, 'ResponseStarted');
    assert.equal(evs[0]!.responseStatus?.code, 401);
    assert.deepEqual(evs[0]!.user, {});
  });

  it('sourceIPs: X-Forwarded-For, then X-Real-Ip, then the connection', async () => {
    await get(srv, '/api/v1/namespaces', { 'Audit-Id': 'forwarded', 'X-Forwarded-For': '10.0.0.7, 10.0.0.8', 'X-Real-Ip': '10.0.0.9' });
    assert.deepEqual(eventsOf('forwarded')[0]!.sourceIPs, ['10.0.0.7', '10.0.0.8', '10.0.0.9', '127.0.0.1']);
  });
});
