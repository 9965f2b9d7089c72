// What a write does to managedFields through the whole server: an applier setting a value someone
// else set becomes a co-owner (a write, though the object is otherwise unchanged), a dry-run apply
// answers with the merged result, and a client's own managedFields are honoured — [{}] clears them,
// an empty list or a malformed one changes nothing.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const CM = '/api/v1/namespaces/default/configmaps';
const owners = (o: KubeObject) => (o.metadata.managedFields ?? []).map((e) => `${e.manager}/${e.operation}:${JSON.stringify(e.fieldsV1)}`).sort();

describe('managedFields through writes', () => {
  let srv: InProcessServer;
  before(async () => {
    srv = await startInProcessServer();
  });
  after(async () => {
    await srv.stop();
  });

  const apply = (name: string, data: Record<string, string>, manager: string, dryRun = false) =>
    srv.client().patch<KubeObject>(`${CM}/${name}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }, 'apply', { query: { fieldManager: manager, ...(dryRun ? { dryRun: 'All' } : {}) } });

  it('makes an applier of an identical value a co-owner, so the first applier dropping it keeps it', async () => {
    await apply('shared', { a: '1' }, 'one');
    const second = await apply('shared', { a: '1' }, 'two');
    assert.deepEqual(owners(second), ['one/Apply:{"f:data":{"f:a":{}}}', 'two/Apply:{"f:data":{"f:a":{}}}']);
    const dry = await apply('shared', { b: '2' }, 'one', true);
    assert.deepEqual(dry.data, { a: '1', b: '2' });
    assert.deepEqual((await srv.client().get<KubeObject>(`${CM}/shared`)).data, { a: '1' });
  });

  it("honours a client's managedFields: [{}] clears them, [] and malformed entries change nothing", async () => {
    const c = srv.client();
    await c.create(CM, { metadata: { name: 'owned' }, data: { a: '1' } });
    const keep = await c.get<KubeObject>(`${CM}/owned`);
    const before = owners(keep);
    assert.equal(before.length, 1);
    const unchangedByEmpty = await c.replace<KubeObject>(`${CM}/owned`, { ...keep, metadata: { ...keep.metadata, managedFields: [] } });
    assert.deepEqual(owners(unchangedByEmpty), before);
    const unchangedByJunk = await c.replace<KubeObject>(`${CM}/owned`, { ...unchangedByEmpty, metadata: { ...unchangedByEmpty.metadata, managedFields: [{ manager: 'x', operation: 'Sideways' }] as never } });
    assert.deepEqual(owners(unchangedByJunk), before);
    const cleared = await c.replace<KubeObject>(`${CM}/owned`, { ...unchangedByJunk, metadata: { ...unchangedByJunk.metadata, managedFields: [{}] as never } });
    assert.equal(cleared.metadata.managedFields, undefined);
  });
});
