// apimachinery's wire rules, which clients other than kubectl lean on: booleans in the query as
// the parameter codec reads them (Python sends `True`), JSON bodies ending in a newline, and
// unserved subresources that say why.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { optionalQueryBool, queryBool } from '../../src/api/query-params.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

describe('boolean query parameters', () => {
  it('are false only when absent, 0 or false in any case', () => {
    const q = new URLSearchParams('a=true&b=True&c=1&d=&e=false&f=FALSE&g=0&h=yes');
    for (const name of ['a', 'b', 'c', 'd', 'h']) assert.equal(queryBool(q, name), true, name);
    for (const name of ['e', 'f', 'g', 'absent']) assert.equal(queryBool(q, name), false, name);
    assert.equal(optionalQueryBool(q, 'absent'), undefined);
    assert.equal(optionalQueryBool(q, 'f'), false);
    assert.equal(queryBool(new URLSearchParams('watch'), 'watch'), true);
  });
});

describe('the wire as clients other than kubectl see it', () => {
  let srv: InProcessServer;
  let agent: https.Agent;
  before(async () => {
    srv = await startInProcessServer();
    agent = new https.Agent({ ...srv.adminTls, keepAlive: false });
    const c = srv.client();
    await c.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'wire' }, data: { a: '1' } });
  });
  after(async () => {
    agent.destroy();
    await srv.stop();
  });

  /** The first `bytes` of a response (enough for a watch that stays open), and its status. */
  function request(method: string, path: string, body?: unknown, bytes = 1 << 20): Promise<{ code: number; text: string; type: string }> {
    return new Promise((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(`${srv.url}${path}`, { method, agent, headers: data ? { 'Content-Type': 'application/json' } : {} }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        const done = () => resolve({ code: res.statusCode ?? 0, text, type: String(res.headers['content-type']) });
        res.on('data', (d: string) => {
          text += d;
          if (text.length >= bytes || (text.includes('\n') && bytes === 1)) {
            done();
            req.destroy();
          }
        });
        res.on('end', done);
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end(data);
    });
  }

  it('ends JSON bodies with a newline: objects, lists, errors and discovery', async () => {
    for (const path of ['/api/v1/namespaces/default/configmaps/wire', '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces/default/configmaps/missing', '/api', '/apis', '/version']) {
      const r = await request('GET', path);
      assert.ok(r.text.endsWith('}\n'), `${path}: ${JSON.stringify(r.text.slice(-20))}`);
      assert.doesNotThrow(() => JSON.parse(r.text), path);
    }
  });

  it('takes watch=True, watch=1 and a bare watch as a watch, and watch=False as a list', async () => {
    for (const q of ['watch=True', 'watch=1', 'watch', 'watch=TRUE']) {
      const r = await request('GET', `/api/v1/namespaces/default/configmaps?${q}&timeoutSeconds=5`, undefined, 1);
      const first = JSON.parse(r.text.split('\n')[0]!) as { type?: string; object?: { metadata?: { name?: string } } };
      assert.equal(first.type, 'ADDED', q);
    }
    for (const q of ['watch=False', 'watch=0', 'watch=false']) {
      const r = await request('GET', `/api/v1/namespaces/default/configmaps?${q}`);
      assert.equal((JSON.parse(r.text) as { kind?: string }).kind, 'ConfigMapList', q);
    }
  });

  it('orphans on orphanDependents=True, and cascades on orphanDependents=False', async () => {
    const rs = (name: string) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name },
      spec: { replicas: 0, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    });
    const rsPath = '/apis/apps/v1/namespaces/default/replicasets';
    await request('POST', rsPath, rs('orphaned'));
    await request('POST', rsPath, rs('cascaded'));
    // No garbage collector runs in this server: an orphaning delete leaves the object waiting on its finalizer.
    const orphaned = await request('DELETE', `${rsPath}/orphaned?orphanDependents=True`);
    assert.equal(orphaned.code, 200, orphaned.text);
    const kept = JSON.parse((await request('GET', `${rsPath}/orphaned`)).text) as { metadata: { finalizers?: string[]; deletionTimestamp?: string } };
    assert.deepEqual(kept.metadata.finalizers, ['orphan']);
    assert.ok(kept.metadata.deletionTimestamp);
    await request('DELETE', `${rsPath}/cascaded?orphanDependents=False`);
    assert.equal((await request('GET', `${rsPath}/cascaded`)).code, 404);
  });

  it('says which subresources are not served yet, and why', async () => {
    await request('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    for (const [method, path] of [
      ['GET', '/api/v1/namespaces/default/pods/p/proxy/healthz'],
      ['GET', '/api/v1/namespaces/default/services/kubernetes/proxy/'],
    ] as const) {
      const r = await request(method, path);
      const st = JSON.parse(r.text) as { kind: string; code: number; reason: string; message: string };
      assert.equal(st.kind, 'Status', path);
      assert.equal(st.code, 405, path);
      assert.equal(st.reason, 'MethodNotAllowed', path);
      assert.match(st.message, /is not served by skiff yet: /, path);
    }
  });

  it('answers exec, attach and portforward without an upgrade as upstream does: Upgrade request required', async () => {
    await request('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'q' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
    for (const [method, path] of [
      ['POST', '/api/v1/namespaces/default/pods/q/exec?command=true&stdout=true'],
      ['GET', '/api/v1/namespaces/default/pods/q/attach?stdout=true'],
      ['POST', '/api/v1/namespaces/default/pods/q/portforward?ports=80'],
    ] as const) {
      const r = await request(method, path);
      const st = JSON.parse(r.text) as { kind: string; code: number; reason: string; message: string };
      assert.equal(st.code, 400, path);
      assert.equal(st.reason, 'BadRequest', path);
      assert.equal(st.message, 'Upgrade request required', path);
    }
  });
});
