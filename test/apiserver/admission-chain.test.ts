// The admission chain: plugins run in upstream's order whatever order they are listed in, each
// stage only through the plugins that handle the write, synchronously when no step is async, and a
// refusal stops the plugins after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { orderedChain } from '../../src/apiserver/admission/chain.js';
import type { AdmissionAttributes, AdmissionPlugin, Operation } from '../../src/apiserver/admission/plugin.js';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { ResourceType } from '../../src/api/resource.js';
import type { Store } from '../../src/store/store.js';
import { DeletedNodeLabels, nodeRestriction } from '../../src/apiserver/admission/node-restriction.js';

const pods = resourceTypeFor('', 'v1', 'pods')!;
const leases = resourceTypeFor('coordination.k8s.io', 'v1', 'leases')!;

function attrs(resource: ResourceType, operation: Operation = 'CREATE'): AdmissionAttributes {
  return { operation, resource, subresource: '', namespace: 'default', name: 'x', object: { apiVersion: 'v1', kind: resource.kind, metadata: { name: 'x' } }, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false };
}

function recorder(name: string, seen: string[], opts: { async?: boolean; refuse?: boolean; onlyPods?: boolean } = {}): AdmissionPlugin {
  const step = (stage: string) => (a: AdmissionAttributes) => {
    seen.push(`${stage}:${name}`);
    if (opts.refuse) throw new Error(`${name} refuses ${a.name}`);
    return opts.async ? Promise.resolve() : undefined;
  };
  return { name, handles: (_op, rt) => !opts.onlyPods || rt === pods, mutate: step('mutate'), validate: step('validate') };
}

test('plugins run in upstream order, mutating then validating', async () => {
  const seen: string[] = [];
  const chain = orderedChain([recorder('ResourceQuota', seen), recorder('DefaultTolerationSeconds', seen), recorder('NamespaceLifecycle', seen, { async: true }), recorder('ServiceAccount', seen)]);
  const a = attrs(pods);
  await chain.mutate(a);
  await chain.validate(a);
  assert.deepEqual(seen, [
    'mutate:NamespaceLifecycle', 'mutate:ServiceAccount', 'mutate:DefaultTolerationSeconds', 'mutate:ResourceQuota',
    'validate:NamespaceLifecycle', 'validate:ServiceAccount', 'validate:DefaultTolerationSeconds', 'validate:ResourceQuota',
  ]);
});

test('a write no plugin handles costs no promise; a synchronous chain stays synchronous', () => {
  const seen: string[] = [];
  const chain = orderedChain([recorder('DefaultTolerationSeconds', seen, { onlyPods: true })]);
  assert.equal(chain.mutate(attrs(leases, 'UPDATE')), undefined);
  assert.deepEqual(seen, []);
  assert.equal(chain.mutate(attrs(pods)), undefined);
  assert.deepEqual(seen, ['mutate:DefaultTolerationSeconds']);
  assert.deepEqual(chain.pluginsFor('mutate', 'UPDATE', leases), []);
});

test('NodeRestriction leaves Lease renewals alone: the heartbeat path runs no admission', () => {
  const chain = orderedChain([nodeRestriction(new DeletedNodeLabels(undefined as unknown as Store))]);
  assert.equal(chain.admits('UPDATE', leases), false);
  assert.equal(chain.admits('CREATE', leases), true);
  assert.equal(chain.admits('UPDATE', pods), true);
  assert.equal(chain.admits('DELETE', pods), true);
});

test('a refusal stops the chain, also after an asynchronous step', async () => {
  const seen: string[] = [];
  const chain = orderedChain([recorder('NamespaceLifecycle', seen, { async: true }), recorder('ServiceAccount', seen, { refuse: true }), recorder('DefaultTolerationSeconds', seen)]);
  await assert.rejects(async () => chain.mutate(attrs(pods)), /ServiceAccount refuses x/);
  assert.deepEqual(seen, ['mutate:NamespaceLifecycle', 'mutate:ServiceAccount']);
});

test('a plugin without a place in upstream order is refused when the chain is built', () => {
  assert.throws(() => orderedChain([recorder('MadeUp', [])]), /admission plugin MadeUp has no place/);
});
