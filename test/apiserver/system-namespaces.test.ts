import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { FakeClock } from '../../src/util/clock.js';
import { eventually } from '../support/eventually.js';
import { isStatusError } from '../../src/api/errors.js';

describe('system namespaces', () => {
  const clock = new FakeClock(Date.now());
  let s: InProcessServer;
  before(async () => {
    s = await startInProcessServer({ clock });
  });
  after(async () => {
    await s.stop();
  });

  it('come back within a minute when gone (upstream system namespaces controller)', async () => {
    const c = s.client();
    // Gone from storage outright: nothing else would bring it back.
    await s.store.delete('/registry/namespaces/kube-node-lease');
    await eventually(async () => c.get('/api/v1/namespaces/kube-node-lease').then(() => false, (e: unknown) => isStatusError(e, 'NotFound')), 5000, 'gone');
    await clock.advance(59_000);
    assert.ok(await c.get('/api/v1/namespaces/kube-node-lease').then(() => false, (e: unknown) => isStatusError(e, 'NotFound')), 'not before the minute');
    await clock.advance(1_000);
    await eventually(async () => c.get<{ metadata: { name: string } }>('/api/v1/namespaces/kube-node-lease').then((ns) => ns.metadata.name === 'kube-node-lease', () => false), 5000, 'recreated');
  });
});
