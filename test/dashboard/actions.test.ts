import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from '../../src/api/errors.js';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { ApiClient } from '../../src/client/rest.js';
import { parseAction, runAction } from '../../src/dashboard/actions.js';
import { parseReadyz } from '../../src/dashboard/control-plane.js';

/** Records the calls; refuses those `refuse` names. */
function fakeClient(refuse: (method: string, path: string) => StatusError | undefined = () => undefined) {
  const calls: { method: string; path: string; body: unknown; type?: string }[] = [];
  const call = async (method: string, path: string, body: unknown, type?: string) => {
    calls.push({ method, path, body, ...(type ? { type } : {}) });
    const e = refuse(method, path);
    if (e) throw e;
    return {};
  };
  const client = {
    patch: (path: string, body: unknown, type?: string) => call('PATCH', path, body, type),
    create: (path: string, body: unknown) => call('POST', path, body),
    delete: (path: string) => call('DELETE', path, undefined),
  } as unknown as ApiClient;
  return { client, calls };
}

const pod = (name: string, owner?: string): Pod => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', ...(owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: owner, name: 'o', uid: 'u', controller: true }] } : {}) }, status: { phase: 'Running' } }) as Pod;

describe('dashboard actions', () => {
  it('checks what the page sends, naming what is wrong', () => {
    assert.deepEqual(parseAction({ action: 'cordon', node: 'n1' }), { action: 'cordon', node: 'n1' });
    assert.equal(parseAction({ action: 'cordon' }), 'cordon needs "node"');
    assert.equal(parseAction([]), 'unknown action undefined: one of cordon, uncordon, drain, retire, delete-pod, scale');
    assert.equal(parseAction('x'), 'the body must be a JSON object');
    assert.equal(parseAction({ action: 'scale', kind: 'DaemonSet', namespace: 'a', name: 'b', replicas: 1 }), 'scale applies to a Deployment or a StatefulSet');
    assert.equal(parseAction({ action: 'scale', kind: 'Deployment', namespace: 'a', name: 'b', replicas: -1 }), '"replicas" must be a whole number, 0 or more');
    assert.equal(parseAction({ action: 'delete-pod', namespace: 'a' }), 'delete-pod needs "namespace" and "pod"');
  });

  it('makes the calls kubectl makes', async () => {
    const { client, calls } = fakeClient();
    const podsOn = () => [];
    assert.equal((await runAction({ action: 'cordon', node: 'n1' }, { client, podsOn })).ok, true);
    await runAction({ action: 'uncordon', node: 'n1' }, { client, podsOn });
    await runAction({ action: 'scale', kind: 'Deployment', namespace: 'ns', name: 'web', replicas: 5 }, { client, podsOn });
    await runAction({ action: 'delete-pod', namespace: 'ns', pod: 'p' }, { client, podsOn });
    await runAction({ action: 'retire', node: 'n1' }, { client, podsOn });
    assert.deepEqual(calls, [
      { method: 'PATCH', path: '/api/v1/nodes/n1', body: { spec: { unschedulable: true } }, type: 'strategic' },
      { method: 'PATCH', path: '/api/v1/nodes/n1', body: { spec: { unschedulable: null } }, type: 'strategic' },
      { method: 'PATCH', path: '/apis/apps/v1/namespaces/ns/deployments/web/scale', body: { spec: { replicas: 5 } }, type: 'merge' },
      { method: 'DELETE', path: '/api/v1/namespaces/ns/pods/p', body: undefined },
      { method: 'PATCH', path: '/api/v1/nodes/n1', body: { metadata: { annotations: { 'skiff.dev/retire': 'true' } } }, type: 'merge' },
    ]);
  });

  it('answers a refusal with the API message and code', async () => {
    const forbidden = new StatusError(403, 'Forbidden', 'nodes "n1" is forbidden: User "viewer" cannot patch resource "nodes" in API group "" at the cluster scope');
    const { client } = fakeClient(() => forbidden);
    assert.deepEqual(await runAction({ action: 'cordon', node: 'n1' }, { client, podsOn: () => [] }), { ok: false, message: forbidden.message, code: 403 });
  });

  it('drains as kubectl drain --ignore-daemonsets: cordon, then an eviction per pod, naming the pods a budget holds back', async () => {
    const { client, calls } = fakeClient((method, path) => (path.includes('/pods/held/') ? new StatusError(429, 'TooManyRequests', 'Cannot evict pod as it would violate the pod\'s disruption budget.') : undefined));
    const r = await runAction({ action: 'drain', node: 'n1' }, { client, podsOn: () => [pod('web'), pod('agent', 'DaemonSet'), pod('held')] });
    assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), ['PATCH /api/v1/nodes/n1', 'POST /api/v1/namespaces/ns/pods/web/eviction', 'POST /api/v1/namespaces/ns/pods/held/eviction']);
    assert.equal(r.ok, false);
    assert.equal(r.code, 429);
    assert.match(r.message, /node\/n1 cordoned; 1 pod evicted; not evicted: ns\/held: .*disruption budget/);
  });

  it('reads a member /readyz answer', () => {
    assert.deepEqual(parseReadyz('[+]etcd ok\n[+]shutdown ok\nreadyz check passed\n'), { ready: 'ok', storage: 'ok' });
    assert.deepEqual(parseReadyz('[-]etcd failed: context deadline exceeded\n[+]shutdown ok\nreadyz check failed\n'), { ready: 'etcd: context deadline exceeded', storage: 'context deadline exceeded' });
    assert.deepEqual(parseReadyz('ok'), { ready: 'ok' });
  });
});
