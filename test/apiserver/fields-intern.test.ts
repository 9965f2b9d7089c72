import { resourceTypeFor } from '../../src/api/registry.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { internFieldsV1, internManagedFields } from '../../src/apiserver/patch/fields-intern.js';
import { decodeManagedFields, updateManagedFields } from '../../src/apiserver/patch/managedfields.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const tree = () => ({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } });

describe('interned FieldsV1 trees', () => {
  it('gives equal trees one frozen copy, equal subtrees too, and leaves the content as it was', () => {
    const a = internFieldsV1(tree());
    const b = internFieldsV1(tree());
    assert.equal(a, b);
    assert.deepEqual(a, tree());
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a['f:metadata']));
    const other = internFieldsV1({ 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } }, 'f:status': {} });
    assert.notEqual(other, a);
    assert.equal(other['f:metadata'], a['f:metadata'], 'the shared subtree is one object');
    assert.equal(internFieldsV1(a), a, 'a canonical tree is its own copy');
  });

  it('leaves what is not a tree of objects alone', () => {
    const odd = { 'f:x': 'not an object' } as unknown as Record<string, unknown>;
    assert.equal(internFieldsV1(odd as never), odd);
    const entries = [{ manager: 'm', fieldsV1: tree() }, { manager: 'n' }];
    internManagedFields(entries);
    assert.equal(entries[0]!.fieldsV1, internFieldsV1(tree()));
    assert.equal(entries[1]!.fieldsV1, undefined);
  });

  it('writes to one object leave the field sets its twins decode as they were (decoded sets are shared)', () => {
    const twin = (): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: { app: 'web' }, managedFields: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: tree() }] },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    const a = twin();
    const b = twin();
    internManagedFields(a.metadata.managedFields);
    internManagedFields(b.metadata.managedFields);
    const before = decodeManagedFields(b.metadata.managedFields, true).get('{"manager":"kubectl","operation":"Update","apiVersion":"v1"}')!.set.toFieldsV1();
    // The same manager adds a label to a, another takes its image: both sets of a change.
    const a2 = structuredClone(a);
    a2.metadata.labels = { app: 'web', tier: 'front' };
    updateManagedFields(a, a2, { manager: 'kubectl', operation: 'Update', now: '2026-12-07T00:00:00Z', kind: resourceTypeFor('', 'v1', 'pods')! });
    const a3 = structuredClone(a2);
    (a3.spec as { containers: { image: string }[] }).containers[0]!.image = 'nginx';
    updateManagedFields(a2, a3, { manager: 'editor', operation: 'Update', now: '2026-12-07T00:00:01Z', kind: resourceTypeFor('', 'v1', 'pods')! });
    assert.equal(a3.metadata.managedFields?.length, 2);
    const after = decodeManagedFields(b.metadata.managedFields, true).get('{"manager":"kubectl","operation":"Update","apiVersion":"v1"}')!.set.toFieldsV1();
    assert.deepEqual(after, before);
    assert.deepEqual(after, tree());
  });

  it('trees that differ in one branch decode into sets that share the rest (a status naming its pod IP)', () => {
    const status = (ip: string) => ({ 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:status': {}, 'f:type': {} } }, 'f:podIPs': { [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } } } });
    const entry = (ip: string) => [{ manager: 'skiff-agent', operation: 'Update', apiVersion: 'v1', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: status(ip) }];
    const [a, b] = [entry('10.0.0.1'), entry('10.0.0.2')];
    internManagedFields(a);
    internManagedFields(b);
    const set = (e: unknown) => [...decodeManagedFields(e, true).values()][0]!.set;
    const [sa, sb] = [set(a), set(b)];
    assert.equal(sa.node(['f:status', 'f:conditions']), sb.node(['f:status', 'f:conditions']), 'the common branch is one decoded set');
    assert.notEqual(sa.node(['f:status', 'f:podIPs']), sb.node(['f:status', 'f:podIPs']));
    assert.deepEqual(sa.toFieldsV1(), status('10.0.0.1'));
    assert.deepEqual(sb.toFieldsV1(), status('10.0.0.2'));
    // An empty leaf decodes as a member; an empty whole tree as an empty set.
    assert.ok(sa.has(['f:status', 'f:podIPs', 'k:{"ip":"10.0.0.1"}', 'f:ip']));
    assert.ok(set([{ operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: internFieldsV1({}) }]).isEmpty());
  });

  describe('through the API', () => {
    let srv: InProcessServer;
    let client: ApiClient;
    before(async () => {
      srv = await startInProcessServer();
      client = srv.client();
    });
    after(async () => {
      client.close();
      await srv.stop();
    });

    it('pods created alike share their managers’ trees in the cache, and read back as written', async () => {
      const pod = (name: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
      await client.create('/api/v1/namespaces/default/pods', pod('p1'));
      await client.create('/api/v1/namespaces/default/pods', pod('p2'));
      // The cache's own objects, as the server's controllers read them.
      const cached = async (name: string) => (await srv.api.localReads.list<KubeObject>('/api/v1/namespaces/default/pods', { fieldSelector: `metadata.name=${name}` }, undefined, { readOnly: true })).items[0]!;
      const [p1, p2] = await Promise.all([cached('p1'), cached('p2')]);
      type Tree = Record<string, Record<string, unknown>>;
      const f1 = (p1.metadata.managedFields as { fieldsV1: Tree }[])[0]!.fieldsV1;
      const f2 = (p2.metadata.managedFields as { fieldsV1: Tree }[])[0]!.fieldsV1;
      // Each pod's token volume has a name of its own (kube-api-access-<random>), so the roots
      // differ; everything else is one copy.
      assert.notEqual(f1, f2);
      assert.equal(f1['f:metadata'], f2['f:metadata']);
      assert.equal(f1['f:spec']!['f:containers'], f2['f:spec']!['f:containers']);
      const served = await client.get<KubeObject>('/api/v1/namespaces/default/pods/p2');
      assert.deepEqual((served.metadata.managedFields as { fieldsV1: unknown }[])[0]!.fieldsV1, f2);
      // A later write to one pod does not touch the other's (shared) tree.
      await client.patch('/api/v1/namespaces/default/pods/p1', { metadata: { labels: { tier: 'front' } } }, 'merge');
      const again = await cached('p2');
      assert.deepEqual(Object.keys((again.metadata.managedFields as { fieldsV1: Record<string, Record<string, unknown>> }[])[0]!.fieldsV1['f:metadata']!['f:labels']!), ['.', 'f:app']);
    });
  });
});
