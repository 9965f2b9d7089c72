// Merging a cluster's admin context into the user's kubeconfig, as kind does, and taking it out again.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergeClusterContext, removeClusterContext, userKubeconfigPath } from '../../src/cli/user-kubeconfig.js';
import { renderKubeconfig } from '../../src/pki/kubeconfig.js';
import { yaml } from '../../src/util/lazy-yaml.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-user-kubeconfig-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function admin(server: string): string {
  const path = join(dir, `admin-${server.replace(/\W/g, '')}`);
  writeFileSync(path, renderKubeconfig({ clusterName: 'skiff', server, caPem: 'CA', user: 'admin', clientCertPem: 'CERT', clientKeyPem: 'KEY' }));
  return path;
}

test('$KUBECONFIG (its first file), else ~/.kube/config', () => {
  assert.equal(userKubeconfigPath({ KUBECONFIG: `/a/one:/b/two`, HOME: '/h' }), '/a/one');
  assert.equal(userKubeconfigPath({ HOME: '/h' }), '/h/.kube/config');
  assert.equal(userKubeconfigPath({ KUBECONFIG: '', HOME: '/h' }), '/h/.kube/config');
});

test('merges skiff-<name> as cluster, user and context, current; keeps the rest and its comments; removes exactly it', () => {
  const path = join(dir, 'config');
  writeFileSync(path, '# mine\napiVersion: v1\nkind: Config\nclusters:\n- name: work\n  cluster: {server: "https://w:6443"}\nusers:\n- name: me\n  user: {token: t}\ncontexts:\n- name: work\n  context: {cluster: work, user: me}\ncurrent-context: work\n');
  assert.equal(mergeClusterContext(path, 'a', admin('https://127.0.0.1:6443')), 'skiff-a');
  mergeClusterContext(path, 'b', admin('https://127.0.0.1:7443'));
  // Again, with a new address (a restart on another port): replaced, not added.
  mergeClusterContext(path, 'a', admin('https://127.0.0.1:6444'));
  const text = readFileSync(path, 'utf8');
  assert.match(text, /^# mine$/m);
  const c = yaml().parse(text) as { 'current-context': string; clusters: { name: string; cluster: Record<string, string> }[]; users: { name: string; user: Record<string, string> }[]; contexts: { name: string }[] };
  assert.equal(c['current-context'], 'skiff-a');
  assert.deepEqual(c.clusters.map((x) => x.name), ['work', 'skiff-a', 'skiff-b']);
  assert.deepEqual(c.contexts.map((x) => x.name), ['work', 'skiff-a', 'skiff-b']);
  assert.equal(c.clusters[1]!.cluster.server, 'https://127.0.0.1:6444');
  assert.equal(Buffer.from(c.users[1]!.user['client-key-data']!, 'base64').toString(), 'KEY');

  assert.equal(removeClusterContext(path, 'a'), true);
  assert.equal(removeClusterContext(path, 'a'), false, 'nothing left to remove');
  const d = yaml().parse(readFileSync(path, 'utf8')) as typeof c;
  assert.equal(d['current-context'], '', 'no current context rather than one naming nothing');
  assert.deepEqual(d.contexts.map((x) => x.name), ['work', 'skiff-b']);
  assert.deepEqual(d.users.map((x) => x.name), ['me', 'skiff-b']);
});

test('creates the file (and its directory) when there is none; refuses to rewrite one it cannot parse', () => {
  const fresh = join(dir, 'new', '.kube', 'config');
  mergeClusterContext(fresh, 'x', admin('https://127.0.0.1:1'));
  assert.equal((yaml().parse(readFileSync(fresh, 'utf8')) as { 'current-context': string })['current-context'], 'skiff-x');
  const broken = join(dir, 'broken');
  writeFileSync(broken, 'clusters: [\n');
  assert.throws(() => mergeClusterContext(broken, 'x', admin('https://127.0.0.1:1')), /is not a kubeconfig skiff can read .*; it was left as it is/);
  assert.equal(readFileSync(broken, 'utf8'), 'clusters: [\n');
});
