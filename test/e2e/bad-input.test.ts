// Bad input gets a Kubernetes Status with the right code and reason, and the server keeps serving.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { TestServer } from '../support/cluster.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

interface Raw {
  code: number;
  body: string;
}

describe('bad input', () => {
  const s = new TestServer('badinput');
  let send: (method: string, path: string, body?: string | Buffer, contentType?: string, auth?: boolean) => Promise<Raw>;
  before(async () => {
    await s.start(['--watch-cache-size', '5']);
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    send = (method, path, body, contentType = 'application/json', auth = true) =>
      new Promise((resolve, reject) => {
        const url = new URL(path, kc.server);
        const req = https.request(
          url,
          {
            method,
            ca: kc.caPem,
            ...(auth ? { cert: kc.clientCertPem, key: kc.clientKeyPem } : {}),
            headers: body !== undefined ? { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(body)) } : {},
          },
          (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  const status = (r: Raw) => JSON.parse(r.body) as { kind: string; code: number; reason: string; message: string; details?: { causes?: { field?: string }[] } };

  it('refuses requests without credentials (401), but serves health checks', async () => {
    const r = await send('GET', '/api/v1/namespaces', undefined, undefined, false);
    assert.equal(r.code, 401);
    assert.equal(status(r).reason, 'Unauthorized');
    assert.equal((await send('GET', '/readyz', undefined, undefined, false)).code, 200);
  });

  it('answers malformed JSON and YAML with 400', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', '{"metadata": {');
    assert.equal(r.code, 400);
    assert.equal(status(r).kind, 'Status');
    assert.equal(status(r).reason, 'BadRequest');
    const y = await send('POST', '/api/v1/namespaces/default/configmaps', 'metadata: [unclosed', 'application/yaml');
    assert.equal(y.code, 400);
    const arr = await send('POST', '/api/v1/namespaces/default/configmaps', '[1,2]');
    assert.equal(arr.code, 400);
  });

  it('rejects a wrong kind or apiVersion with 400', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }));
    assert.equal(r.code, 400);
    const v = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } }));
    assert.equal(v.code, 400);
  });

  it('rejects invalid names with 422 and causes', async () => {
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'Not_Valid' } }));
    assert.equal(r.code, 422);
    assert.equal(status(r).reason, 'Invalid');
    assert.equal(status(r).details?.causes?.[0]?.field, 'metadata.name');
    const missing = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: {} }));
    assert.equal(missing.code, 422);
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const big = JSON.stringify({ metadata: { name: 'big' }, data: { x: 'a'.repeat(3 * 1024 * 1024 + 10) } });
    const r = await send('POST', '/api/v1/namespaces/default/configmaps', big);
    assert.equal(r.code, 413);
    assert.equal(status(r).reason, 'RequestEntityTooLarge');
  });

  it('answers unknown resources and paths with 404', async () => {
    const r = await send('GET', '/api/v1/widgets');
    assert.equal(r.code, 404);
    assert.equal(status(r).reason, 'NotFound');
    assert.equal((await send('GET', '/apis/nope.example.com/v1/things')).code, 404);
    assert.equal((await send('GET', '/api/v1/namespaces/nope/configmaps/x')).code, 404);
  });

  it('answers a malformed percent escape in a path with 400', async () => {
    const r = await send('GET', '/api/v1/namespaces/default/configmaps/a%zz');
    assert.equal(r.code, 400);
    assert.equal(status(r).reason, 'BadRequest');
  });

  it('answers a stale resourceVersion with 409 and an unknown content type with 415', async () => {
    const created = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'rv' }, data: { a: '1' } }));
    assert.equal(created.code, 201);
    const obj = JSON.parse(created.body);
    const ok = await send('PUT', '/api/v1/namespaces/default/configmaps/rv', JSON.stringify({ ...obj, data: { a: '2' } }));
    assert.equal(ok.code, 200);
    const stale = await send('PUT', '/api/v1/namespaces/default/configmaps/rv', JSON.stringify({ ...obj, data: { a: '3' } }));
    assert.equal(stale.code, 409);
    assert.equal(status(stale).reason, 'Conflict');
    const odd = await send('PATCH', '/api/v1/namespaces/default/configmaps/rv', '{}', 'text/plain');
    assert.equal(odd.code, 415);
    const dup = await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'rv' } }));
    assert.equal(dup.code, 409);
    assert.equal(status(dup).reason, 'AlreadyExists');
  });

  it('answers a watch from a resourceVersion older than the event window with 410 Expired', async () => {
    const first = JSON.parse((await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: 'w0' } }))).body);
    for (let i = 1; i < 10; i++) await send('POST', '/api/v1/namespaces/default/configmaps', JSON.stringify({ metadata: { name: `w${i}` } }));
    const r = await send('GET', `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${first.metadata.resourceVersion}`);
    // The stream starts 200 and carries one ERROR event with the 410 Status, then ends.
    const line = JSON.parse(r.body.trim().split('\n')[0]!);
    assert.equal(line.type, 'ERROR');
    assert.equal(line.object.code, 410);
    assert.equal(line.object.reason, 'Expired');
  });

  it('keeps serving after all of it', async () => {
    const r = await send('GET', '/api/v1/namespaces/default/configmaps/rv');
    assert.equal(r.code, 200);
    assert.equal(JSON.parse(r.body).data.a, '2');
  });
});
