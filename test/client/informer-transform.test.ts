// Agents and the fleet keep pods and Nodes without managedFields (about half a pod as the API sends
// it). Stripping must leave the original alone, and what a reader writes back from its stripped
// copy must keep the stored managers: an update that carries no managedFields keeps them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { Informer, stripManagedFields } from '../../src/client/informer.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('informers that strip managedFields', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  before(async () => {
    srv = await startInProcessServer();
    c = srv.client();
  });
  after(async () => {
    c.close();
    await srv.stop();
  });

  it('copies without managedFields and leaves the object it was given as it was', () => {
    const obj: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', managedFields: [{ manager: 'm', operation: 'Update' }] } };
    const slim = stripManagedFields(obj);
    assert.equal(slim.metadata.managedFields, undefined);
    assert.equal(slim.metadata.name, 'x');
    assert.equal(obj.metadata.managedFields?.length, 1);
    const bare: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y' } };
    assert.equal(stripManagedFields(bare), bare);
  });

  it('writing back what it cached keeps the stored managers', async () => {
    await c.create(CM, { metadata: { name: 'kept' }, data: { a: '1' } }, { query: { fieldManager: 'creator' } });
    const ac = new AbortController();
    const inf = new Informer<KubeObject>(c, { path: CM, transform: stripManagedFields });
    const running = inf.run(ac.signal);
    try {
      await inf.waitForSync();
      const cached = await eventually(() => inf.get('default/kept'), 10_000, 'the informer to hold the ConfigMap');
      assert.equal(cached.metadata.managedFields, undefined);
      await c.replace(`${CM}/kept`, { ...cached, data: { a: '1', b: '2' } }, { query: { fieldManager: 'writer' } });
      const stored = await c.get<KubeObject>(`${CM}/kept`);
      assert.deepEqual(stored.metadata.managedFields?.map((m) => m.manager).sort(), ['creator', 'writer']);
    } finally {
      ac.abort();
      await running;
    }
  });
});
