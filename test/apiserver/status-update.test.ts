// A status write is judged on what it may change. A pod stored before a spec rule existed (or
// written by an older server) keeps getting its status written by its node, while a write to its
// spec is held to today's rules.
import { NO_ADMISSION } from '../../src/apiserver/admission/plugin.js';
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

describe('a status write to a pod whose stored spec breaks a rule of today', () => {
  let dir: string;
  let store: Store;
  let cache: WatchCache;
  let pods: ObjectStore;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'status-update-'));
    store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    cache = new WatchCache({ store, prefix: '/registry/pods/', log: silentLogger() });
    pods = new ObjectStore(resourceTypeFor('', 'v1', 'pods')!, store, systemClock, cache, NO_ADMISSION);
    cache.start();
    await cache.whenReady();
    // Stored as it is, past validation: a container name that is not a DNS label.
    const old: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'old', namespace: 'default', uid: 'u-old', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { nodeName: 'n1', containers: [{ name: 'Bad_Name', image: 'busybox' }] },
      status: { phase: 'Pending' },
    } as KubeObject;
    await store.create('/registry/pods/default/old', encodeStored(old));
  });
  after(async () => {
    cache.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is written; a change to the same pod outside its status is refused with the rule it breaks', async () => {
    const written = await pods.update('default', 'old', (cur) => ({ ...cur, status: { phase: 'Running' } }), ctx(), { subresource: 'status' });
    assert.equal((written.status as { phase?: string }).phase, 'Running');
    await assert.rejects(
      pods.update('default', 'old', (cur) => ({ ...cur, metadata: { ...cur.metadata, labels: { a: 'b' } } }), ctx()),
      (e: unknown) => e instanceof Error && /Bad_Name/.test(e.message),
    );
  });
});
