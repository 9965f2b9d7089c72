// Updates start from the watch cache's object. A cache that is behind the store (another member
// wrote, or its watch has not delivered yet) must never make a write lose what the store holds,
// nor refuse what the store would allow.
import { NO_ADMISSION } from '../../src/apiserver/admission/plugin.js';
import { orderedChain } from '../../src/apiserver/admission/chain.js';
import { DeletedNodeLabels, nodeRestriction } from '../../src/apiserver/admission/node-restriction.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { KubeObject } from '../../src/api/types.js';
import { ObjectStore } from '../../src/apiserver/object-store.js';
import type { WriteContext } from '../../src/apiserver/request-context.js';
import { encodeStored } from '../../src/apiserver/stored-json.js';
import { WatchCache } from '../../src/apiserver/watch-cache.js';
import { openSqliteStore } from '../../src/store/sqlite.js';
import type { Store } from '../../src/store/store.js';
import { systemClock } from '../../src/util/clock.js';
import { silentLogger } from '../../src/util/log.js';

const ctx = (): WriteContext => ({ user: { name: 'test', groups: ['system:masters'] }, fieldManager: 'test', dryRun: false, fieldValidation: 'Ignore', warnings: [] });
const KEY = '/registry/configmaps/default/cm';
const data = (o: KubeObject) => (o as KubeObject & { data?: Record<string, string> }).data ?? {};

describe('updates that start from a stale watch cache', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  let objects: ObjectStore;
  let stale: KubeObject;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ufc-'));
    store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    const rt = resourceTypeFor('', 'v1', 'configmaps')!;
    cache = new WatchCache({ store, prefix: '/registry/configmaps/', log: silentLogger() });
    objects = new ObjectStore(rt, store, systemClock, cache, NO_ADMISSION);
    cache.start();
    await cache.whenReady();
    const created = await objects.create('default', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: '1' } } as KubeObject, ctx());
    assert.ok(await cache.waitForRevision(Number(created.metadata.resourceVersion), 5000));
    stale = cache.get(KEY)!;
    // The cache stops here; the store moves on without it (as another member's write would).
    cache.stop();
    const kv = (await store.get(KEY))!;
    const next = { ...JSON.parse(kv.value), data: { a: '1', b: '2' } } as KubeObject;
    await store.update(KEY, encodeStored(next), kv.modRevision);
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps what the store holds beyond the cache (the compare-and-swap retries on the stored object)', async () => {
    assert.deepEqual(data(cache.get(KEY)!), { a: '1' }, 'the cache must be behind for this test');
    const read = store.get.bind(store);
    let reads = 0;
    store.get = (key) => (reads++, read(key));
    const updated = await objects.update('default', 'cm', (cur) => ({ ...cur, data: { ...data(cur), c: '3' } }), ctx()).finally(() => (store.get = read));
    // Started from the cache (no read), retried on the object the store's conflict answered with.
    assert.equal(reads, 0);
    assert.deepEqual(data(updated), { a: '1', b: '2', c: '3' });
    assert.deepEqual(data(JSON.parse((await store.get(KEY))!.value) as KubeObject), { a: '1', b: '2', c: '3' });
  });

  it('honours a precondition on the stored resourceVersion the cache has not seen', async () => {
    const stored = (await store.get(KEY))!;
    const updated = await objects.update('default', 'cm', (cur) => ({ ...cur, metadata: { ...cur.metadata, resourceVersion: String(stored.modRevision) }, data: { ...data(cur), d: '4' } }), ctx());
    assert.equal(data(updated).d, '4');
    // The stale cached revision, on the other hand, is a conflict.
    await assert.rejects(
      objects.update('default', 'cm', (cur) => ({ ...cur, metadata: { ...cur.metadata, resourceVersion: stale.metadata.resourceVersion }, data: { ...data(cur), e: '5' } }), ctx()),
      /Conflict|modified/,
    );
  });

  it('answers a write that changes nothing from the store, not from the stale cache', async () => {
    const stored = JSON.parse((await store.get(KEY))!.value) as KubeObject;
    const same = await objects.update('default', 'cm', (cur) => ({ ...cur, data: data(stored) }), ctx());
    assert.deepEqual(data(same), data(stored));
    assert.equal(same.metadata.resourceVersion, String((await store.get(KEY))!.modRevision));
  });
});

describe('a node writing a pod its stale cache shows bound to it', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  let pods: ObjectStore;
  const POD_KEY = '/registry/pods/default/p';
  const asNode = (node: string): WriteContext => ({ ...ctx(), user: { name: `system:node:${node}`, groups: ['system:nodes'] }, fieldManager: 'agent' });
  const pod = (node: string): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }] } }) as KubeObject;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ufc-pod-'));
    store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    cache = new WatchCache({ store, prefix: '/registry/pods/', log: silentLogger() });
    // NodeRestriction as the server runs it: the store admits each attempt on the object it writes.
    pods = new ObjectStore(resourceTypeFor('', 'v1', 'pods')!, store, systemClock, cache, orderedChain([nodeRestriction(new DeletedNodeLabels(store))]));
    cache.start();
    await cache.whenReady();
    const created = await pods.create('default', pod('node-a'), ctx());
    assert.ok(await cache.waitForRevision(Number(created.metadata.resourceVersion), 5000));
    // The pod is deleted and made again, bound to another node, while this cache looks away.
    cache.stop();
    await store.delete(POD_KEY);
    const again = await pods.create('default', pod('node-b'), ctx());
    assert.equal(((again.spec ?? {}) as { nodeName?: string }).nodeName, 'node-b');
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is refused: the write is judged on the stored pod, which is bound elsewhere', async () => {
    assert.equal(((cache.get(POD_KEY)!.spec ?? {}) as { nodeName?: string }).nodeName, 'node-a', 'the cache must be behind for this test');
    const forbiddenForA = (e: unknown) => e instanceof Error && /node "node-a" can only change pods bound to it/.test(e.message);
    await assert.rejects(pods.update('default', 'p', (cur) => ({ ...cur, status: { phase: 'Failed' } }), asNode('node-a'), { subresource: 'status' }), forbiddenForA);
    await assert.rejects(pods.delete('default', 'p', {}, asNode('node-a')), forbiddenForA);
    const stored = JSON.parse((await store.get(POD_KEY))!.value) as KubeObject;
    assert.notEqual((stored.status as { phase?: string } | undefined)?.phase, 'Failed');
    // Its own node may.
    const written = await pods.update('default', 'p', (cur) => ({ ...cur, status: { ...(cur.status as object), phase: 'Running' } }), asNode('node-b'), { subresource: 'status' });
    assert.equal((written.status as { phase?: string }).phase, 'Running');
  });
});
