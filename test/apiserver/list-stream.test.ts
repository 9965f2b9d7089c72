// Big lists are streamed batch by batch (chunked on HTTP/1.1, DATA frames on HTTP/2) from their
// items' stored text; small ones go out whole with a Content-Length. Either way a client gets
// the same typed list: items without kind and apiVersion, each with its resourceVersion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendJsonStream } from '../../src/apiserver/http/codec.js';
import type { IncomingHttpHeaders } from 'node:http';
import { startInProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';
import { ApiClient } from '../../src/client/rest.js';
import type { KubeList } from '../../src/api/types.js';

function rawGet(url: string, tls: { ca: string; cert: string; key: string }, abortAfterBytes?: number): Promise<{ headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: tls.ca, cert: tls.cert, key: tls.key, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
        if (abortAfterBytes !== undefined && body.length >= abortAfterBytes) {
          req.destroy();
          resolve({ headers: res.headers, body });
        }
      });
      res.on('end', () => resolve({ headers: res.headers, body }));
    });
    req.on('error', (e) => (abortAfterBytes === undefined ? reject(e) : undefined));
  });
}

test('a big list is streamed and a small one sent whole, the same list either way', async () => {
  const srv = await startInProcessServer();
  try {
    const admin = srv.client();
    const payload = 'x'.repeat(1024);
    for (let i = 0; i < 200; i++) await admin.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${String(i).padStart(3, '0')}` }, data: { payload } });
    const h2 = new ApiClient({ servers: [srv.url], caPem: srv.adminTls.ca, clientCertPem: srv.adminTls.cert, clientKeyPem: srv.adminTls.key, http2: true, timeoutMs: 10_000 });
    try {
      for (const client of [admin, h2]) {
        const list = await client.get<KubeList>('/api/v1/namespaces/default/configmaps');
        assert.equal(list.kind, 'ConfigMapList');
        assert.equal(list.apiVersion, 'v1');
        assert.ok(Number(list.metadata.resourceVersion) > 0);
        assert.equal(list.items.length, 200);
        list.items.forEach((cm, i) => {
          assert.equal(cm.metadata.name, `cm-${String(i).padStart(3, '0')}`);
          assert.equal(cm.kind, undefined, 'typed list items carry no kind');
          assert.equal(cm.apiVersion, undefined);
          assert.ok(Number(cm.metadata.resourceVersion) > 0);
          assert.equal((cm as unknown as { data: { payload: string } }).data.payload, payload);
        });
      }
    } finally {
      h2.close();
    }

    const big = await rawGet(`${srv.url}/api/v1/namespaces/default/configmaps`, srv.adminTls);
    assert.equal(big.headers['content-length'], undefined, 'streamed');
    assert.equal(big.headers['transfer-encoding'], 'chunked');
    assert.ok(big.body.endsWith('}\n'));
    const small = await rawGet(`${srv.url}/api/v1/namespaces/default/configmaps?limit=2`, srv.adminTls);
    assert.equal(Number(small.headers['content-length']), Buffer.byteLength(small.body));
    assert.equal((JSON.parse(small.body) as KubeList).items.length, 2);

    // Clients that go away before or while their list is sent leave nothing behind: every seat
    // they held is free again (a list whose client left must not wait for a 'drain' that never comes).
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        rawGet(`${srv.url}/api/v1/namespaces/default/configmaps`, srv.adminTls, i % 2 === 0 ? 1 : 70_000).catch(() => undefined),
      ),
    );
    await eventually(async () => {
      const text = await admin.get<string>('/metrics', { accept: 'text/plain' });
      // The scrape itself is the one exempt request running.
      return /apiserver_flowcontrol_current_executing_seats\{priority_level="exempt"\} 1\n/.test(text);
    }, 5_000, 'the seats of the abandoned lists to be free');

    // A client that goes away halfway through leaves the server serving everyone else.
    const cut = await rawGet(`${srv.url}/api/v1/namespaces/default/configmaps`, srv.adminTls, 70_000);
    assert.ok(cut.body.length >= 70_000);
    assert.equal((await admin.get<KubeList>('/api/v1/namespaces/default/configmaps', { query: { limit: 1 } })).items.length, 1);
  } finally {
    await srv.stop();
  }
});

test('a list for a client that has already gone is not sent, and its answer does not wait for ever', async () => {
  // A plain HTTP server whose handler finds its client gone before the list is written (as when
  // kubectl is interrupted while a big list is read).
  let finished: Promise<void> | undefined;
  const server = http.createServer((req, res) => {
    const parts = Array.from({ length: 100 }, () => 'x'.repeat(2_000));
    // Gone, and its 'close' already told: no event is left to wake a writer that waits.
    res.once('close', () => setImmediate(() => (finished = sendJsonStream(req, res, 200, parts))));
    req.socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => {
      const r = http.get(`http://127.0.0.1:${port}/`, () => resolve());
      r.on('error', () => resolve());
    });
    await eventually(() => finished !== undefined, 2_000, 'the handler to run');
    await withTimeout(finished!, 2_000);
  } finally {
    server.close();
  }
});

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms).unref())]);
}
