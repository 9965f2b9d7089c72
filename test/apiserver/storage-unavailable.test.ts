// How a failing store is answered. Unreachable (nothing was done): 503 with Retry-After, which
// clients may send again. A write that reached the store and may have been applied (an etcd
// member lost before it answered): 504 Timeout without Retry-After, so that no client sends a
// create again and finds its own object, as happened with a 503 in the crash campaign.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:https';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { StoreError, outcomeUnknownError, type Store } from '../../src/store/store.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

describe('storage unavailable', () => {
  let srv: InProcessServer;
  let real: Store;
  const dir = mkdtempSync(join(tmpdir(), 'skiff-unavail-'));
  before(async () => {
    real = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    // Creates of names starting "lost-" apply, then fail as if the member died before answering;
    // those starting "down-" fail before anything is done.
    const store = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'create') {
          return async (key: string, value: string, opts?: unknown) => {
            if (key.includes('/down-')) throw new StoreError('unavailable', 'etcd: no leader');
            const kv = await target.create(key, value, opts as never);
            if (key.includes('/lost-')) throw outcomeUnknownError('etcd: create failed and may or may not have been applied: Connection dropped');
            return kv;
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    srv = await startInProcessServer({ store });
  });
  after(async () => {
    await srv.stop();
    await real.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (name: string) =>
    new Promise<{ code: number; retryAfter: string | undefined; body: { reason?: string; message?: string } }>((resolve, reject) => {
      const req = request(`${srv.url}/api/v1/namespaces/default/configmaps`, { method: 'POST', ca: srv.adminTls.ca, cert: srv.adminTls.cert, key: srv.adminTls.key, headers: { 'Content-Type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: JSON.parse(text) as { reason?: string } }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ metadata: { name } }));
    });

  it('answers a write that may have been applied with 504 Timeout and no Retry-After', async () => {
    const r = await post('lost-1');
    assert.equal(r.code, 504);
    assert.equal(r.body.reason, 'Timeout');
    assert.match(r.body.message!, /may or may not have been applied/);
    assert.equal(r.retryAfter, undefined, 'no invitation to send it again');
    // It was applied: the object is there.
    await srv.client().get('/api/v1/namespaces/default/configmaps/lost-1');
  });

  it('answers a store that could not be reached with 503 and Retry-After', async () => {
    const r = await post('down-1');
    assert.equal(r.code, 503);
    assert.equal(r.body.reason, 'ServiceUnavailable');
    assert.equal(r.retryAfter, '1');
  });
});
