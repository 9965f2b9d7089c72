// Object semantics through the real HTTP API: generation, status separation, no-op writes,
// graceful deletion, finalizers, dry run, namespaces, binding and eviction.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { isStatusError } from '../../src/api/errors.js';
import type { ApiClient } from '../../src/client/rest.js';
import { startInProcessServer, type InProcessServer } from '../support/in-process.js';

const deployment = (name: string, replicas = 1): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
});

const podOn = (name: string, nodeName?: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'i' }] },
});

describe('object semantics', () => {
  let srv: InProcessServer;
  let c: ApiClient;
  const D = '/apis/apps/v1/namespaces/default/deployments';
  const P = '/api/v1/namespaces/default/pods';
  before(async () => {
    srv = await startInProcessServer();
    c = srv.client();
  });
  after(async () => srv.stop());

  it('bumps generation on spec changes only, and keeps status out of main-resource writes', async () => {
    const d = await c.create(D, deployment('gen'));
    assert.equal(d.metadata.generation, 1);
    const labelled = await c.patch(`${D}/gen`, { metadata: { labels: { a: 'b' } } });
    assert.equal(labelled.metadata.generation, 1);
    const scaled = await c.patch(`${D}/gen`, { spec: { replicas: 3 }, status: { replicas: 99 } });
    assert.equal(scaled.metadata.generation, 2);
    assert.equal((scaled.status as { replicas?: number } | undefined)?.replicas, undefined);
    const status = await c.patch(`${D}/gen/status`, { status: { replicas: 3, observedGeneration: 2 }, spec: { replicas: 7 } });
    assert.equal((status.status as { replicas: number }).replicas, 3);
    assert.equal((status.spec as { replicas: number }).replicas, 3, 'status writes leave spec alone');
    assert.equal(status.metadata.generation, 2);
  });

  it('does not write (or bump resourceVersion) for a no-op update', async () => {
    const d = await c.get(`${D}/gen`);
    const same = await c.patch(`${D}/gen`, { metadata: { labels: { a: 'b' } } });
    assert.equal(same.metadata.resourceVersion, d.metadata.resourceVersion);
  });

  it('honours dryRun without persisting', async () => {
    const dry = await c.create(D, deployment('dry'), { query: { dryRun: 'All' } });
    assert.equal(dry.metadata.name, 'dry');
    await assert.rejects(c.get(`${D}/dry`), (e) => isStatusError(e, 'NotFound'));
  });

  it('generates names from generateName', async () => {
    const cm = await c.create('/api/v1/namespaces/default/configmaps', { metadata: { generateName: 'gen-' } });
    assert.match(cm.metadata.name!, /^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    // As upstream, managedFields record generateName but never the name (a redrawn name changes no owner).
    const fields = JSON.stringify(cm.metadata.managedFields);
    assert.match(fields, /f:generateName/);
    assert.doesNotMatch(fields, /f:name/);
  });

  it('refuses content in a missing namespace (404)', async () => {
    await assert.rejects(c.create('/api/v1/namespaces/nope/configmaps', { metadata: { name: 'x' } }), (e) => isStatusError(e, 'NotFound') && /namespaces "nope" not found/.test(e.message));
    // NamespaceLifecycle runs first, as upstream's: the missing namespace is what is reported, not
    // the invalid name or the missing service account that later steps would refuse.
    await assert.rejects(c.create('/api/v1/namespaces/nope/configmaps', { metadata: { name: 'Not_A_Name' } }), (e) => isStatusError(e, 'NotFound') && /namespaces "nope" not found/.test(e.message));
    await assert.rejects(c.create('/api/v1/namespaces/nope/pods', { metadata: { name: 'p' }, spec: { serviceAccountName: 'ghost', containers: [{ name: 'c', image: 'i' }] } }), (e) => isStatusError(e, 'NotFound') && /namespaces "nope" not found/.test(e.message));
  });

  it('refuses new content in a terminating namespace (403) with upstream\'s message', async () => {
    await c.create('/api/v1/namespaces', { metadata: { name: 'leaving' } });
    // No namespace controller runs here: its `kubernetes` finalizer keeps it Terminating.
    await c.delete('/api/v1/namespaces/leaving');
    await assert.rejects(
      c.create('/api/v1/namespaces/leaving/configmaps', { metadata: { name: 'late' } }),
      (e) => isStatusError(e, 'Forbidden') && e.message === 'configmaps "late" is forbidden: unable to create new content in namespace leaving because it is being terminated',
    );
  });

  it('deletes a bound pod gracefully, an unbound pod at once, and force-deletes with grace 0', async () => {
    await c.create(P, podOn('bound', 'n1'));
    await c.create(P, podOn('loose'));
    const terminating = await c.delete<KubeObject>(`${P}/bound`);
    assert.ok(terminating.metadata.deletionTimestamp);
    assert.equal(terminating.metadata.deletionGracePeriodSeconds, 30);
    assert.ok((await c.get(`${P}/bound`)).metadata.deletionTimestamp, 'still there until the agent finishes');
    await c.delete(`${P}/loose`);
    await assert.rejects(c.get(`${P}/loose`), (e) => isStatusError(e, 'NotFound'));
    await c.delete(`${P}/bound`, { gracePeriodSeconds: 0 });
    await assert.rejects(c.get(`${P}/bound`), (e) => isStatusError(e, 'NotFound'));
  });

  it('holds an object with finalizers until they are removed', async () => {
    const cm = await c.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'fin', finalizers: ['example.com/hold'] } });
    await c.delete(`/api/v1/namespaces/default/configmaps/fin`);
    const held = await c.get('/api/v1/namespaces/default/configmaps/fin');
    assert.ok(held.metadata.deletionTimestamp);
    await assert.rejects(
      c.patch('/api/v1/namespaces/default/configmaps/fin', { metadata: { finalizers: ['example.com/hold', 'example.com/more'] } }),
      (e) => isStatusError(e, 'Invalid'),
    );
    await c.patch('/api/v1/namespaces/default/configmaps/fin', { metadata: { finalizers: null } });
    await assert.rejects(c.get('/api/v1/namespaces/default/configmaps/fin'), (e) => isStatusError(e, 'NotFound'));
    void cm;
  });

  it('marks foreground and orphan deletions with their finalizers', async () => {
    await c.create(D, deployment('fg'));
    await c.delete(`${D}/fg`, { propagationPolicy: 'Foreground' });
    assert.deepEqual((await c.get(`${D}/fg`)).metadata.finalizers, ['foregroundDeletion']);
    await c.create(D, deployment('orph'));
    await c.delete(`${D}/orph`, { propagationPolicy: 'Orphan' });
    assert.deepEqual((await c.get(`${D}/orph`)).metadata.finalizers, ['orphan']);
  });

  it('binds a pod once, with a PodScheduled condition', async () => {
    await c.create(P, podOn('tobind'));
    await c.create(`${P}/tobind/binding`, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'tobind' }, target: { kind: 'Node', name: 'n2' } });
    const bound = await c.get(`${P}/tobind`);
    assert.equal((bound.spec as { nodeName: string }).nodeName, 'n2');
    const cond = ((bound.status as { conditions: { type: string; status: string }[] }).conditions).find((x) => x.type === 'PodScheduled');
    assert.equal(cond?.status, 'True');
    await assert.rejects(c.create(`${P}/tobind/binding`, { target: { name: 'n3' } }), (e) => isStatusError(e, 'Conflict'));
    // Nobody may move a bound pod through a plain update.
    await assert.rejects(c.patch(`${P}/tobind`, { spec: { nodeName: 'n3' } }), (e) => isStatusError(e, 'Invalid'));
  });

  it('evicts pods while the PodDisruptionBudget allows and refuses with 429 after', async () => {
    for (const n of ['e1', 'e2', 'e3']) {
      await c.create(P, podOn(n, 'n1', { app: 'pdb' }));
      await c.patch(`${P}/${n}/status`, { status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
    }
    await c.create('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { metadata: { name: 'keep2' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'pdb' } } } });
    const evict = (n: string) => c.create(`${P}/${n}/eviction`, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: n, namespace: 'default' } });
    await evict('e1');
    assert.ok((await c.get(`${P}/e1`)).metadata.deletionTimestamp);
    await assert.rejects(evict('e2'), (e) => isStatusError(e) && e.code === 429 && /disruption budget/.test(e.message));
  });

  it("allocates Service addresses as upstream's allocators do: range, uniqueness, and a cluster IP fixed once set", async () => {
    const S = '/api/v1/namespaces/default/services';
    const svc = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec: { ports: [{ port: 80 }], ...spec } });
    const rejected = (p: Promise<unknown>, message: RegExp) => assert.rejects(p, (e) => isStatusError(e) && e.code === 422 && message.test(e.message));
    const a = await c.create<KubeObject>(S, svc('addr-a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30601 }] }));
    const ip = (a.spec as { clusterIP: string }).clusterIP;
    await rejected(c.create(S, svc('addr-dup', { clusterIP: ip })), new RegExp(`spec.clusterIPs: Invalid value: \\[\\]string\\{"${ip}"\\}: failed to allocate IP ${ip}: provided IP is already allocated`));
    await rejected(c.create(S, svc('addr-out', { clusterIP: '192.168.1.1' })), /the provided IP \(192\.168\.1\.1\) is not in the valid range\. The range of valid IPs is 10\.43\.0\.0\/16/);
    await rejected(c.create(S, svc('addr-k8s', { clusterIP: '10.43.0.1' })), /provided IP is already allocated/);
    const chosen = await c.create<KubeObject>(S, svc('addr-chosen', { clusterIP: '10.43.7.7' }));
    assert.deepEqual((chosen.spec as { clusterIPs: string[] }).clusterIPs, ['10.43.7.7']);
    await rejected(c.create(S, svc('addr-np', { type: 'NodePort', ports: [{ port: 80, nodePort: 30601 }] })), /spec\.ports\[0\]\.nodePort: Invalid value: 30601: provided port is already allocated/);
    await rejected(c.patch(`${S}/addr-a`, { spec: { ports: [{ port: 80, nodePort: 1 }] } }, 'merge'), /spec\.ports\[0\]\.nodePort: Invalid value: 1: provided port is not in the valid range\. The range of valid ports is 30000-32767/);
    await rejected(c.patch(`${S}/addr-a`, { spec: { clusterIP: '10.43.0.99' } }, 'merge'), /spec\.clusterIPs\[0\]: Invalid value: \[\]string\{"10\.43\.0\.99"\}: may not change once set/);
    // Its own port and address stay its own through updates.
    const relabelled = await c.patch<KubeObject>(`${S}/addr-a`, { metadata: { labels: { x: 'y' } } }, 'merge');
    assert.equal((relabelled.spec as { clusterIP: string }).clusterIP, ip);
  });

  it('gives NodePorts on a type change, keeps them through updates, releases them when the type goes back, and allocates a health check port for Local LoadBalancers', async () => {
    const S = '/api/v1/namespaces/default/services';
    type Spec = { type: string; healthCheckNodePort?: number; ports: { nodePort?: number }[] };
    const created = await c.create<KubeObject>(S, { metadata: { name: 'np-change' }, spec: { ports: [{ port: 80 }] } });
    assert.equal((created.spec as Spec).ports[0]!.nodePort, undefined);
    const made = await c.patch<KubeObject>(`${S}/np-change`, { spec: { type: 'NodePort' } }, 'merge');
    const port = (made.spec as Spec).ports[0]!.nodePort!;
    assert.ok(port >= 30000 && port <= 32767, `nodePort ${port}`);
    // A full update that leaves nodePort out (kubectl replace of the original manifest) keeps it.
    const replaced = await c.replace<KubeObject>(`${S}/np-change`, { metadata: { name: 'np-change', resourceVersion: made.metadata.resourceVersion }, spec: { type: 'NodePort', ports: [{ port: 80 }] } });
    assert.equal((replaced.spec as Spec).ports[0]!.nodePort, port);
    const back = await c.patch<KubeObject>(`${S}/np-change`, { spec: { type: 'ClusterIP' } }, 'merge');
    assert.equal((back.spec as Spec).ports[0]!.nodePort, undefined);
    // Released: another Service may take it at once.
    await c.create(S, { metadata: { name: 'np-taker' }, spec: { type: 'NodePort', ports: [{ port: 80, nodePort: port }] } });
    const lb = await c.create<KubeObject>(S, { metadata: { name: 'lb-local' }, spec: { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 80 }] } });
    const hc = (lb.spec as Spec).healthCheckNodePort!;
    assert.ok(hc >= 30000 && hc <= 32767 && hc !== (lb.spec as Spec).ports[0]!.nodePort, `healthCheckNodePort ${hc}`);
    const cluster = await c.patch<KubeObject>(`${S}/lb-local`, { spec: { externalTrafficPolicy: 'Cluster' } }, 'merge');
    assert.equal((cluster.spec as Spec).healthCheckNodePort, undefined);
    await assert.rejects(
      c.create(S, { metadata: { name: 'hc-np' }, spec: { type: 'NodePort', healthCheckNodePort: 31999, ports: [{ port: 80 }] } }),
      (e) => isStatusError(e) && e.code === 422 && /spec\.healthCheckNodePort: Forbidden: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'/.test(e.message),
    );
  });

  it('serves deployments/scale and bumps generation through it', async () => {
    await c.create(D, deployment('sc', 2));
    const scale = await c.get<{ spec: { replicas: number }; status: { selector: string } }>(`${D}/sc/scale`);
    assert.equal(scale.spec.replicas, 2);
    assert.equal(scale.status.selector, 'app=sc');
    await c.patch(`${D}/sc/scale`, { spec: { replicas: 5 } });
    const d = await c.get(`${D}/sc`);
    assert.equal((d.spec as { replicas: number }).replicas, 5);
    assert.equal(d.metadata.generation, 2);
    await assert.rejects(c.patch(`${D}/sc/scale`, { spec: { replicas: -1 } }), (e) => isStatusError(e, 'Invalid'));
  });

  it('pages lists with limit and continue at one revision', async () => {
    for (let i = 0; i < 5; i++) await c.create('/api/v1/namespaces/default/configmaps', { metadata: { name: `page-${i}` } });
    const seen: string[] = [];
    let token: string | undefined;
    let rv: string | undefined;
    do {
      const page = await c.get<{ items: KubeObject[]; metadata: { continue?: string; resourceVersion: string } }>('/api/v1/namespaces/default/configmaps', {
        query: { limit: 2, labelSelector: '', ...(token ? { continue: token } : {}) },
      });
      rv ??= page.metadata.resourceVersion;
      seen.push(...page.items.map((i) => i.metadata.name!));
      token = page.metadata.continue || undefined;
      // Writes between pages do not show up in later pages of the same list.
      if (token) await c.create('/api/v1/namespaces/default/configmaps', { metadata: { name: `zz-late-${seen.length}` } });
    } while (token);
    assert.deepEqual(seen.filter((n) => n.startsWith('page-')), ['page-0', 'page-1', 'page-2', 'page-3', 'page-4']);
    assert.ok(!seen.some((n) => n.startsWith('zz-late')));
  });
});
