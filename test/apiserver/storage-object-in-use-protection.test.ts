// StorageObjectInUseProtection admission: new volumes and claims carry their protection finalizer
// (kept once, beside the user's), and nothing else is touched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orderedChain } from '../../src/apiserver/admission/chain.js';
import type { AdmissionAttributes, Operation } from '../../src/apiserver/admission/plugin.js';
import { storageObjectInUseProtection } from '../../src/apiserver/admission/storage-object-in-use-protection.js';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { ResourceType } from '../../src/api/resource.js';

const pvs = resourceTypeFor('', 'v1', 'persistentvolumes')!;
const pvcs = resourceTypeFor('', 'v1', 'persistentvolumeclaims')!;
const pods = resourceTypeFor('', 'v1', 'pods')!;

function attrs(resource: ResourceType, opts: { operation?: Operation; subresource?: string; finalizers?: string[] } = {}): AdmissionAttributes {
  const metadata = { name: 'x', namespace: resource.namespaced ? 'default' : undefined, ...(opts.finalizers ? { finalizers: opts.finalizers } : {}) };
  return {
    operation: opts.operation ?? 'CREATE',
    resource,
    subresource: opts.subresource ?? '',
    namespace: metadata.namespace,
    name: 'x',
    object: { apiVersion: 'v1', kind: resource.kind, metadata },
    oldObject: undefined,
    user: { name: 'u', groups: [] },
    dryRun: false,
  };
}

async function finalizersAfter(a: AdmissionAttributes): Promise<string[] | undefined> {
  await orderedChain([storageObjectInUseProtection()]).mutate(a);
  return a.object!.metadata.finalizers;
}

test('a new volume and a new claim get their protection finalizer, once, after the ones they came with', async () => {
  assert.deepEqual(await finalizersAfter(attrs(pvs)), ['kubernetes.io/pv-protection']);
  assert.deepEqual(await finalizersAfter(attrs(pvcs)), ['kubernetes.io/pvc-protection']);
  assert.deepEqual(await finalizersAfter(attrs(pvcs, { finalizers: ['example.com/keep'] })), ['example.com/keep', 'kubernetes.io/pvc-protection']);
  assert.deepEqual(await finalizersAfter(attrs(pvs, { finalizers: ['kubernetes.io/pv-protection'] })), ['kubernetes.io/pv-protection']);
});

test('updates, subresources and other kinds are left alone', async () => {
  // A user may take the finalizer off a stored claim: an update does not put it back.
  assert.equal(await finalizersAfter(attrs(pvcs, { operation: 'UPDATE' })), undefined);
  assert.equal(await finalizersAfter(attrs(pvcs, { subresource: 'status' })), undefined);
  assert.equal(await finalizersAfter(attrs(pods)), undefined);
});
