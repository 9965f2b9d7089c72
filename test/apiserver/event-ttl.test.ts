// --event-ttl: Events go their TTL after their last write, through the store (a watcher sees them
// deleted), while every other kind stays.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';
import { isStatusError } from '../../src/api/errors.js';
import type { KubeList, KubeObject } from '../../src/api/types.js';

test('Events expire after --event-ttl; other objects stay', async () => {
  const srv = await startInProcessServer({ eventTtlSeconds: 2 });
  try {
    const admin = srv.client();
    const now = new Date().toISOString();
    await admin.create('/api/v1/namespaces/default/events', {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
      reason: 'Testing',
      message: 'short-lived',
      type: 'Normal',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    });
    await admin.create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'stays' } });
    const rv = (await admin.get<KubeList>('/api/v1/namespaces/default/events')).metadata.resourceVersion;
    assert.ok(await admin.get('/api/v1/namespaces/default/events/e1'), 'there at first');
    const ac = new AbortController();
    const seen: string[] = [];
    const watching = (async () => {
      for await (const ev of admin.watch<KubeObject>('/api/v1/namespaces/default/events', { resourceVersion: rv }, ac.signal)) {
        seen.push(`${ev.type} ${ev.object.metadata?.name}`);
      }
    })().catch(() => undefined);
    await eventually(async () => {
      try {
        await admin.get('/api/v1/namespaces/default/events/e1');
        return false;
      } catch (e) {
        return isStatusError(e, 'NotFound');
      }
    }, 15_000, 'the Event to expire');
    await eventually(() => seen.includes('DELETED e1'), 5_000, 'a watcher to see it deleted');
    ac.abort();
    await watching;
    assert.ok(await admin.get('/api/v1/namespaces/default/configmaps/stays'));
  } finally {
    await srv.stop();
  }
});
