// HTTP/2 beside HTTP/1.1 on the API port, as kube-apiserver serves them: kubectl and client-go
// negotiate h2 and multiplex requests and watches over one connection.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http2, { type ClientHttp2Session } from 'node:http2';
import { connect } from 'node:tls';
import type { KubeObject } from '../../src/api/types.js';
import { StaticTokens } from '../../src/auth/static-tokens.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

interface H2Response {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: string;
}

function request(session: ClientHttp2Session, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<H2Response> {
  return new Promise((resolve, reject) => {
    const req = session.request({ ':method': method, ':path': path, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}), ...headers });
    let status = 0;
    let respHeaders: http2.IncomingHttpHeaders = {};
    let text = '';
    req.setEncoding('utf8');
    req.on('response', (h) => {
      status = Number(h[':status']);
      respHeaders = h;
    });
    req.on('data', (d: string) => (text += d));
    req.on('end', () => resolve({ status, headers: respHeaders, body: text }));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

describe('HTTP/2', () => {
  let srv: InProcessServer;
  let session: ClientHttp2Session | undefined;
  const CM = '/api/v1/namespaces/default/configmaps';
  before(async () => {
    srv = await startInProcessServer({ tokenAuthenticators: [StaticTokens.parse('h2-static-token,robot,7,system:masters\n')], idleConnectionMs: 300 });
  });
  // The server closes connections idle for 300 ms here: tests take a live one.
  const conn = (): ClientHttp2Session => {
    if (!session || session.closed || session.destroyed) session = http2.connect(srv.url, { ca: srv.adminTls.ca, cert: srv.adminTls.cert, key: srv.adminTls.key });
    return session;
  };
  /**
   * A request on the live connection. The server may close it between two tests (its idle timer is
   * 300 ms and a loaded machine can be that slow): a stream it refused was never processed, so it is
   * sent again on a new connection, as client-go does after a GOAWAY.
   */
  const live = async (method: string, path: string, body?: unknown): Promise<H2Response> => {
    try {
      return await request(conn(), method, path, body);
    } catch (e) {
      if ((e as { code?: string }).code !== 'ERR_HTTP2_STREAM_ERROR' || !String((e as Error).message).includes('REFUSED_STREAM')) throw e;
      session?.destroy();
      return request(conn(), method, path, body);
    }
  };
  after(async () => {
    session?.close();
    await srv.stop();
  });

  it('negotiates h2 by ALPN and still serves HTTP/1.1 clients on the same port', async () => {
    const alpn = (protocols: string[]) =>
      new Promise<string | false | null>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port: Number(new URL(srv.url).port), ca: srv.adminTls.ca, ALPNProtocols: protocols }, () => {
          resolve(s.alpnProtocol);
          s.destroy();
        });
        s.once('error', reject);
      });
    assert.equal(await alpn(['h2', 'http/1.1']), 'h2');
    assert.equal(await alpn(['http/1.1']), 'http/1.1');
    // skiff's own ApiClient speaks HTTP/1.1.
    const ns = await srv.client().get<KubeObject>('/api/v1/namespaces/default');
    assert.equal(ns.metadata.name, 'default');
  });

  it('authenticates the connection certificate once for every stream, and bearer tokens per request', async () => {
    const list = await live('GET', '/api/v1/namespaces');
    assert.equal(list.status, 200, list.body);
    assert.ok((JSON.parse(list.body) as { items: KubeObject[] }).items.some((n) => n.metadata.name === 'kube-system'));
    const anon = http2.connect(srv.url, { ca: srv.adminTls.ca });
    try {
      const refused = await request(anon, 'GET', '/api/v1/namespaces');
      assert.equal(refused.status, 401);
      assert.equal((JSON.parse(refused.body) as { reason: string }).reason, 'Unauthorized');
      const byToken = await request(anon, 'GET', '/api/v1/namespaces/default', undefined, { authorization: 'Bearer h2-static-token' });
      assert.equal(byToken.status, 200, byToken.body);
    } finally {
      anon.close();
    }
  });

  it('runs concurrent creates over one connection, and answers errors as Status objects', async () => {
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => live('POST', CM, { metadata: { name: `h2-${i}` }, data: { i: String(i) } })));
    assert.deepEqual(created.map((r) => r.status), Array(50).fill(201));
    assert.equal(new Set(created.map((r) => (JSON.parse(r.body) as KubeObject).metadata.resourceVersion)).size, 50);
    const dup = await live('POST', CM, { metadata: { name: 'h2-0' } });
    assert.equal(dup.status, 409);
    assert.equal((JSON.parse(dup.body) as { reason: string }).reason, 'AlreadyExists');
    const bad = await live('POST', CM, '{"metadata":');
    assert.equal(bad.status, 400);
  });

  it('does not take a body cut off by a stream reset for a whole one', async () => {
    // A complete JSON object, so only the missing bytes (not a parse error) can tell the server it
    // was cut. Node's client may send END_STREAM before its RST_STREAM; the declared length
    // still says the body is short.
    const body = JSON.stringify({ metadata: { name: 'cut-off' } });
    const req = conn().request({ ':method': 'POST', ':path': CM, 'content-type': 'application/json', 'content-length': String(body.length + 100) });
    req.on('error', () => {});
    req.write(body);
    await new Promise((r) => setTimeout(r, 50));
    req.close(http2.constants.NGHTTP2_CANCEL);
    await new Promise((r) => req.once('close', r));
    // Ask on the same connection afterwards: the server has handled the reset by then.
    const after = await live('GET', `${CM}/cut-off`);
    assert.equal(after.status, 404, after.body);
  });

  it('closes a connection left without streams, but never one that carries a watch', async () => {
    const idle = http2.connect(srv.url, { ca: srv.adminTls.ca, cert: srv.adminTls.cert, key: srv.adminTls.key });
    const watching = http2.connect(srv.url, { ca: srv.adminTls.ca, cert: srv.adminTls.cert, key: srv.adminTls.key });
    try {
      assert.equal((await request(idle, 'GET', '/api/v1/namespaces/default')).status, 200);
      const watch = watching.request({ ':method': 'GET', ':path': `${CM}?watch=1&timeoutSeconds=60` });
      watch.on('error', () => {});
      await new Promise((resolve) => watch.once('response', resolve));
      // The server says goodbye (GOAWAY) to the idle one within a bounded wait...
      await new Promise<void>((resolve, reject) => {
        idle.once('goaway', () => resolve());
        setTimeout(() => reject(new Error('idle connection was not closed')), 5_000).unref();
      });
      // ...while the one with the open watch still serves new streams.
      assert.equal(watching.closed || watching.destroyed, false);
      assert.equal((await request(watching, 'GET', '/api/v1/namespaces/default')).status, 200);
      watch.close();
    } finally {
      idle.destroy();
      watching.destroy();
    }
  });

  it('streams a watch while other requests share the connection', async () => {
    const start = JSON.parse((await live('GET', CM)).body) as { metadata: { resourceVersion: string } };
    const c = conn();
    const watch = c.request({ ':method': 'GET', ':path': `${CM}?watch=1&resourceVersion=${start.metadata.resourceVersion}&allowWatchBookmarks=true` });
    watch.setEncoding('utf8');
    const seen: string[] = [];
    let buffered = '';
    const got = new Promise<void>((resolve, reject) => {
      watch.on('data', (d: string) => {
        buffered += d;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const ev = JSON.parse(buffered.slice(0, nl)) as { type: string; object: KubeObject };
          buffered = buffered.slice(nl + 1);
          if (ev.type !== 'BOOKMARK') seen.push(`${ev.type} ${ev.object.metadata.name}`);
          if (seen.length === 2) resolve();
        }
      });
      watch.on('error', reject);
      setTimeout(() => reject(new Error(`watch saw only ${JSON.stringify(seen)}`)), 10_000).unref();
    });
    assert.equal((await live('POST', CM, { metadata: { name: 'watched' } })).status, 201);
    assert.equal((await live('DELETE', `${CM}/watched`)).status, 200);
    await got;
    assert.deepEqual(seen, ['ADDED watched', 'DELETED watched']);
    watch.close();
  });
});
