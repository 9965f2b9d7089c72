// Big lists are streamed batch by batch (chunked on HTTP/1.1, DATA frames on HTTP/2) from their
// items' stored text; small ones go out whole with a Content-Length. Either way a client gets
// the same typed list: items without kind and apiVersion, each with its resourceVersion.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { startInProcessServer } from '../support/in-process.js';
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

    // A client that goes away halfway through leaves the server serving everyone else.
    const cut = await rawGet(`${srv.url}/api/v1/namespaces/default/configmaps`, srv.adminTls, 70_000);
    assert.ok(cut.body.length >= 70_000);
    assert.equal((await admin.get<KubeList>('/api/v1/namespaces/default/configmaps', { query: { limit: 1 } })).items.length, 1);
  } finally {
    await srv.stop();
  }
});
