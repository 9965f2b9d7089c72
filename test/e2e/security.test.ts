// Bootstrap tokens, joining with a certificate request, and what a node credential may do.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { webcrypto } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join as joinPath } from 'node:path';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { TestServer, runSkiff } from '../support/cluster.js';
import { eventually } from '../support/eventually.js';
import { stringify as stringifyYaml } from 'yaml';
import { ApiClient } from '../../src/client/rest.js';
import { isStatusError } from '../../src/api/errors.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';
import { certificateHash } from '../../src/pki/certificates.js';

x509.cryptoProvider.set(webcrypto as never);

async function csrFor(name: string): Promise<{ csrPem: string; keyPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: `CN=${name}`, keys: keys as never, signingAlgorithm: alg });
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END PRIVATE KEY-----\n`;
  return { csrPem: csr.toString('pem'), keyPem };
}

describe('tokens, join and node credentials', () => {
  const s = new TestServer('security');
  const flagToken = 'abcdef.0123456789abcdef';
  const adminToken = 'static-admin-3f9c2a7e1b';
  const userToken = 'static-user-8d41c06b55';
  const tokenFile = joinPath(s.dataDir, 'tokens.csv');
  let server = '';
  let caPem = '';
  before(async () => {
    // One admin and one ordinary user, as kube-apiserver's --token-auth-file takes them.
    writeFileSync(tokenFile, `${adminToken},ci-admin,1,"system:masters,ci"\n${userToken},alice,2\n`);
    await s.start(['--token', flagToken, '--token-auth-file', tokenFile]);
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    server = kc.server;
    caPem = kc.caPem!;
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  const join = async (token: string, nodeName: string) => {
    const { csrPem, keyPem } = await csrFor('ignored');
    const anon = new ApiClient({ servers: [server], caPem, token });
    try {
      const res = await anon.request<{ certificatePem: string; caPem: string }>('POST', '/skiff/v1/join', { body: { nodeName, csrPem } });
      return new ApiClient({ servers: [server], caPem: res.caPem, clientCertPem: res.certificatePem, clientKeyPem: keyPem });
    } finally {
      anon.close();
    }
  };

  it('serves the CA publicly so agents can pin it by hash', async () => {
    const anon = new ApiClient({ servers: [server], caPem });
    const res = await anon.get<{ caPem: string }>('/skiff/v1/ca');
    assert.equal(certificateHash(res.caPem), certificateHash(caPem));
    anon.close();
  });

  it('creates, lists and revokes tokens', async () => {
    const created = await runSkiff(['token', 'create', '--kubeconfig', s.kubeconfig, '--ttl', '1h', '--description', 'ci']);
    assert.equal(created.code, 0, created.stderr);
    const token = created.stdout.trim();
    assert.match(token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    const listed = await runSkiff(['token', 'list', '--kubeconfig', s.kubeconfig]);
    assert.match(listed.stdout, new RegExp(`^${token.split('.')[0]}\\s`, 'm'));
    assert.match(listed.stdout, /^abcdef\s+<forever>/m);
    const node = await join(token, 'joined-1');
    node.close();
    const deleted = await runSkiff(['token', 'delete', token.split('.')[0]!, '--kubeconfig', s.kubeconfig]);
    assert.equal(deleted.code, 0, deleted.stderr);
    await assert.rejects(join(token, 'joined-2'), (e) => isStatusError(e) && e.code === 401);
  });

  it('refuses a wrong token and a malformed request', async () => {
    await assert.rejects(join('abcdef.ffffffffffffffff', 'n'), (e) => isStatusError(e) && e.code === 401);
    const anon = new ApiClient({ servers: [server], caPem, token: flagToken });
    await assert.rejects(anon.request('POST', '/skiff/v1/join', { body: { nodeName: 'Bad_Name', csrPem: 'x' } }), (e) => isStatusError(e) && e.code === 400);
    await assert.rejects(anon.request('POST', '/skiff/v1/join', { body: { nodeName: 'ok', csrPem: 'not a csr' } }), (e) => isStatusError(e) && e.code === 400);
    // A bootstrap token grants nothing but joining.
    await assert.rejects(anon.get('/api/v1/namespaces/kube-system/secrets'), (e) => isStatusError(e) && e.code === 403);
    anon.close();
  });

  it('takes static bearer tokens from --token-auth-file, from kubectl (HTTP/2) and client libraries', async () => {
    const admin = new ApiClient({ servers: [server], caPem, token: adminToken });
    const ns = await admin.get<{ metadata: { name: string } }>('/api/v1/namespaces/default');
    assert.equal(ns.metadata.name, 'default');
    admin.close();
    const caFile = joinPath(s.dataDir, 'ca.pem');
    writeFileSync(caFile, caPem);
    const kubectl = (token: string, ...args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) =>
        execFile('kubectl', ['--server', server, '--certificate-authority', caFile, '--token', token, ...args], (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr })),
      );
    const created = await kubectl(adminToken, 'create', 'configmap', 'from-static-token', '-n', 'default', '--from-literal=k=v');
    assert.equal(created.code, 0, created.out);
    const listed = await kubectl(adminToken, 'get', 'configmap', 'from-static-token', '-n', 'default', '--show-managed-fields', '-o', 'json');
    assert.equal(listed.code, 0, listed.out);
    const cm = JSON.parse(listed.out) as { metadata: { managedFields?: { manager: string }[] } };
    assert.deepEqual(cm.metadata.managedFields?.map((f) => f.manager), ['kubectl-create'], listed.out);
    // A user outside system:masters is authenticated (403, not 401) and named in the refusal.
    const refused = await kubectl(userToken, 'get', 'secrets', '-n', 'kube-system');
    assert.equal(refused.code, 1);
    assert.match(refused.out, /Error from server \(Forbidden\): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "kube-system"/);
    const wrong = await kubectl(`${adminToken}x`, 'get', 'namespaces');
    assert.equal(wrong.code, 1);
    assert.match(wrong.out, /Unauthorized/);
  });

  it('kubectl auth whoami and can-i answer for any authenticated user', async () => {
    const caFile = joinPath(s.dataDir, 'ca-auth.pem');
    writeFileSync(caFile, caPem);
    const kubectl = (token: string, ...args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) =>
        execFile('kubectl', ['--server', server, '--certificate-authority', caFile, '--token', token, ...args], (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr })),
      );
    const who = await kubectl(adminToken, 'auth', 'whoami');
    assert.equal(who.code, 0, who.out);
    assert.match(who.out, /Username\s+ci-admin/);
    assert.match(who.out, /Groups\s+\[system:masters ci system:authenticated\]/);
    assert.match((await kubectl(userToken, 'auth', 'whoami')).out, /Username\s+alice/);
    const yes = await kubectl(adminToken, 'auth', 'can-i', 'delete', 'pods');
    assert.deepEqual([yes.code, yes.out.trim()], [0, 'yes']);
    const no = await kubectl(userToken, 'auth', 'can-i', 'list', 'secrets', '-n', 'kube-system');
    assert.deepEqual([no.code, no.out.trim()], [1, 'no']);
    const path = await kubectl(adminToken, 'auth', 'can-i', 'get', '/metrics');
    assert.deepEqual([path.code, path.out.trim()], [0, 'yes']);
    const list = await kubectl(adminToken, 'auth', 'can-i', '--list');
    assert.equal(list.code, 0, list.out);
    assert.match(list.out, /^\*\.\*\s+\[\]\s+\[\]\s+\[\*\]$/m);
    const limited = await kubectl(userToken, 'auth', 'can-i', '--list');
    assert.match(limited.out, /selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
  });

  it('runs impersonated requests (kubectl --as, --as-group) as the user named, and only for callers allowed to impersonate', async () => {
    const caFile = joinPath(s.dataDir, 'ca-as.pem');
    writeFileSync(caFile, caPem);
    const kubectl = (token: string, ...args: string[]) =>
      new Promise<{ code: number; out: string }>((resolve) =>
        execFile('kubectl', ['--server', server, '--certificate-authority', caFile, '--token', token, ...args], (err, stdout, stderr) => resolve({ code: err ? 1 : 0, out: stdout + stderr })),
      );
    const who = await kubectl(adminToken, 'auth', 'whoami', '--as=jane', '--as-group=devs');
    assert.match(who.out, /Username\s+jane/);
    assert.match(who.out, /Groups\s+\[devs system:authenticated\]/);
    const no = await kubectl(adminToken, 'auth', 'can-i', 'get', 'pods', '--as=jane');
    assert.deepEqual([no.code, no.out.trim()], [1, 'no']);
    const listed = await kubectl(adminToken, 'get', 'pods', '--as=jane');
    assert.equal(listed.code, 1);
    assert.match(listed.out, /Error from server \(Forbidden\): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"/);
    const created = await kubectl(adminToken, 'create', 'configmap', 'as-jane', '--as=jane');
    assert.equal(created.code, 1, 'a write asked as jane must not happen as the admin');
    assert.equal((await kubectl(adminToken, 'get', 'configmap', 'as-jane')).code, 1);
    // A node identity may read nodes, not delete them; the admin may be anyone, masters included.
    const nodeArgs = ['--as=system:node:node-9', '--as-group=system:nodes'];
    assert.match((await kubectl(adminToken, 'auth', 'can-i', 'get', 'nodes', ...nodeArgs)).out, /^yes$/m);
    assert.match((await kubectl(adminToken, 'auth', 'can-i', 'delete', 'nodes', ...nodeArgs)).out, /^no - node "node-9" may only change its own Node$/m);
    assert.equal((await kubectl(adminToken, 'get', 'namespaces', '--as=ops', '--as-group=system:masters')).code, 0);
    // Only callers allowed the impersonate verb may ask.
    const refused = await kubectl(userToken, 'get', 'namespaces', '--as=ci-admin', '--as-group=system:masters');
    assert.equal(refused.code, 1);
    assert.match(refused.out, /Error from server \(Forbidden\): users "ci-admin" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope/);
  });

  it('stores ServiceAccounts and RBAC objects for manifests (kubectl create, apply, get), validated as upstream; every namespace gets a default ServiceAccount', async () => {
    await s.k(['create', 'namespace', 'rbac-e2e']);
    await eventually(async () => (await s.k(['get', 'serviceaccounts', '-n', 'rbac-e2e'])).includes('default'), 15_000, 'default ServiceAccount');
    const firstUid = await s.k(['get', 'sa', 'default', '-n', 'rbac-e2e', '-o', 'jsonpath={.metadata.uid}']);
    await s.k(['delete', 'sa', 'default', '-n', 'rbac-e2e']);
    await eventually(async () => {
      const uid = await s.k(['get', 'sa', 'default', '-n', 'rbac-e2e', '-o', 'jsonpath={.metadata.uid}']).catch(() => '');
      return uid !== '' && uid !== firstUid;
    }, 15_000, 'default ServiceAccount recreated');
    await s.k(['create', 'serviceaccount', 'builder', '-n', 'rbac-e2e']);
    await s.k(['create', 'role', 'pod-reader', '--verb=get,list,watch', '--resource=pods', '-n', 'rbac-e2e']);
    await s.k(['create', 'rolebinding', 'read-pods', '--role=pod-reader', '--serviceaccount=rbac-e2e:builder', '--user=alice', '-n', 'rbac-e2e']);
    await s.k(['create', 'clusterrole', 'node-viewer', '--verb=get', '--resource=nodes']);
    await s.k(['create', 'clusterrolebinding', 'view-nodes', '--clusterrole=node-viewer', '--group=ops']);
    const manifest = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'cm-editor', namespace: 'rbac-e2e' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }] },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'edit-cms', namespace: 'rbac-e2e' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-editor' }, subjects: [{ kind: 'Group', name: 'devs' }] },
    ];
    await s.k(['apply', '-f', '-'], { input: manifest.map((m) => stringifyYaml(m)).join('---\n') });
    const bindings = await s.k(['get', 'rolebindings', '-n', 'rbac-e2e', '-o', 'wide']);
    assert.match(bindings, /^read-pods\s+Role\/pod-reader\s+\S+\s+alice\s+rbac-e2e\/builder$/m);
    assert.match(bindings, /^edit-cms\s+Role\/cm-editor\s+\S+\s+devs\s*$/m);
    assert.match(await s.k(['get', 'clusterrolebinding', 'view-nodes']), /^view-nodes\s+ClusterRole\/node-viewer\s+\S+$/m);
    const roles = await s.k(['get', 'roles', '-n', 'rbac-e2e']);
    assert.match(roles, /^NAME\s+CREATED AT$/m);
    assert.match(roles, /^pod-reader\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    assert.match(await s.k(['get', 'sa', 'builder', '-n', 'rbac-e2e']), /^builder\s+0\s+\S+$/m);
    const changed = await s.kubectl(['patch', 'rolebinding', 'read-pods', '-n', 'rbac-e2e', '--type=merge', '-p', '{"roleRef":{"name":"other"}}']);
    assert.notEqual(changed.code, 0);
    assert.match(changed.stderr, /roleRef: Invalid value: .*cannot change roleRef/);
    const badRule = await s.kubectl(['create', 'role', 'bad', '--verb=get', '--non-resource-url=/metrics', '-n', 'rbac-e2e']);
    assert.notEqual(badRule.code, 0);
    await s.k(['delete', 'namespace', 'rbac-e2e', '--wait=false']);
  });

  it('lets a node write only its own Node, Lease and pods', async () => {
    const node = await join(flagToken, 'worker-a');
    const admin = s.client();
    try {
      await node.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-a' } });
      await assert.rejects(node.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-b' } }), (e) => isStatusError(e) && e.code === 403);
      await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'worker-b' } });
      await node.patch('/api/v1/nodes/worker-a/status', { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, 'strategic');
      await assert.rejects(node.patch('/api/v1/nodes/worker-b', { metadata: { labels: { x: 'y' } } }), (e) => isStatusError(e) && e.code === 403);
      await node.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { metadata: { name: 'worker-a' }, spec: { holderIdentity: 'worker-a' } });
      await assert.rejects(
        node.create('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', { metadata: { name: 'worker-b' }, spec: {} }),
        (e) => isStatusError(e) && e.code === 403,
      );
      const pod = (name: string, nodeName: string) => ({ metadata: { name }, spec: { nodeName, containers: [{ name: 'c', image: 'i' }] } });
      await admin.create('/api/v1/namespaces/default/pods', pod('mine', 'worker-a'));
      await admin.create('/api/v1/namespaces/default/pods', pod('theirs', 'worker-b'));
      await node.patch('/api/v1/namespaces/default/pods/mine/status', { status: { phase: 'Running' } }, 'strategic');
      await assert.rejects(node.patch('/api/v1/namespaces/default/pods/theirs/status', { status: { phase: 'Running' } }, 'strategic'), (e) => isStatusError(e) && e.code === 403);
      const pods = await node.get<{ items: unknown[] }>('/api/v1/pods', { query: { fieldSelector: 'spec.nodeName=worker-a' } });
      assert.equal(pods.items.length, 1);
      await assert.rejects(node.create('/api/v1/namespaces/default/configmaps', { metadata: { name: 'nope' } }), (e) => isStatusError(e) && e.code === 403);
      // Secrets and ConfigMaps: only those a pod bound to the node uses, one at a time; no /metrics.
      for (const n of ['used', 'unused']) await admin.create('/api/v1/namespaces/default/secrets', { metadata: { name: n }, stringData: { k: 'v' } });
      await admin.create('/api/v1/namespaces/default/pods', {
        metadata: { name: 'user' },
        spec: { nodeName: 'worker-a', containers: [{ name: 'c', image: 'i', env: [{ name: 'K', valueFrom: { secretKeyRef: { name: 'used', key: 'k' } } }] }] },
      });
      assert.equal((await node.get<{ metadata: { name: string } }>('/api/v1/namespaces/default/secrets/used')).metadata.name, 'used');
      await assert.rejects(node.get('/api/v1/namespaces/default/secrets/unused'), (e) => isStatusError(e) && e.code === 403 && /^secrets "unused" is forbidden: User "system:node:worker-a" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'worker-a' and this object$/.test(e.message));
      await assert.rejects(node.get('/api/v1/namespaces/default/secrets'), (e) => isStatusError(e) && e.code === 403);
      await assert.rejects(node.get('/api/v1/secrets'), (e) => isStatusError(e) && e.code === 403);
      await assert.rejects(node.get('/metrics'), (e) => isStatusError(e) && e.code === 403);
      assert.ok(await node.get('/api'), 'discovery stays open to nodes');
      await node.delete('/api/v1/namespaces/default/pods/mine', { gracePeriodSeconds: 0 });
    } finally {
      node.close();
      admin.close();
    }
  });
});
