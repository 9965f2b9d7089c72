// The user's own kubeconfig ($KUBECONFIG's first file, else ~/.kube/config), where `skiff up`
// merges its cluster's admin context — as kind does — so plain `kubectl` reaches it with no export.
// A cluster, a user and a context all named skiff-<name>: two clusters never share one, and
// `skiff down --delete` takes exactly those out again. Everything else in the file stays as it was,
// comments included (the file is edited as a YAML document, not re-rendered).
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import type { Document } from 'yaml';
import { yaml } from '../util/lazy-yaml.js';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { parseKubeconfig } from '../pki/kubeconfig.js';

/** The kubeconfig kubectl reads by default: $KUBECONFIG's first file, else ~/.kube/config. */
export function userKubeconfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const first = (env.KUBECONFIG ?? '').split(delimiter).find(Boolean);
  return first ? resolve(first) : join(env.HOME || homedir(), '.kube', 'config');
}

/** The context, cluster and user names of the cluster called `name`. */
export function contextName(name: string): string {
  return `skiff-${name}`;
}

function load(path: string): Document {
  const Y = yaml();
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  if (text.trim() === '') return new Y.Document({ apiVersion: 'v1', kind: 'Config', preferences: {}, clusters: [], users: [], contexts: [], 'current-context': '' });
  const doc = Y.parseDocument(text);
  if (doc.errors.length > 0) throw new Error(`${path} is not a kubeconfig skiff can read (${doc.errors[0]!.message.split('\n')[0]}); it was left as it is`);
  return doc;
}

function save(path: string, doc: Document): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomic(path, doc.toString(), 0o600);
}

/** Puts `{name, [field]: body}` in the list `key`, in place of an entry of that name. */
function upsert(doc: Document, key: 'clusters' | 'users' | 'contexts', name: string, field: 'cluster' | 'user' | 'context', body: Record<string, unknown>): void {
  const Y = yaml();
  let seq = doc.get(key);
  if (!Y.isSeq(seq)) {
    seq = doc.createNode([]);
    doc.set(key, seq);
  }
  const items = (seq as { items: unknown[] }).items;
  const node = doc.createNode({ name, [field]: body });
  const i = items.findIndex((it) => Y.isMap(it) && it.get('name') === name);
  if (i >= 0) items[i] = node;
  else items.push(node);
}

/**
 * Merges the admin context of the cluster whose own kubeconfig is `adminKubeconfig` into the
 * user's kubeconfig at `path`, and makes it current. Returns the context's name.
 */
export function mergeClusterContext(path: string, name: string, adminKubeconfig: string): string {
  const admin = parseKubeconfig(readFileSync(adminKubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const ctx = contextName(name);
  const doc = load(path);
  upsert(doc, 'clusters', ctx, 'cluster', { server: admin.server, ...(admin.caPem ? { 'certificate-authority-data': b64(admin.caPem) } : {}) });
  upsert(doc, 'users', ctx, 'user', {
    ...(admin.clientCertPem ? { 'client-certificate-data': b64(admin.clientCertPem) } : {}),
    ...(admin.clientKeyPem ? { 'client-key-data': b64(admin.clientKeyPem) } : {}),
    ...(admin.token ? { token: admin.token } : {}),
  });
  upsert(doc, 'contexts', ctx, 'context', { cluster: ctx, user: ctx });
  doc.set('current-context', ctx);
  save(path, doc);
  return ctx;
}

/** Takes the cluster's context, cluster and user out of the kubeconfig at `path`; whether any was there. */
export function removeClusterContext(path: string, name: string): boolean {
  if (!existsSync(path)) return false;
  const Y = yaml();
  const ctx = contextName(name);
  const doc = load(path);
  let changed = false;
  for (const key of ['clusters', 'users', 'contexts'] as const) {
    const seq = doc.get(key);
    if (!Y.isSeq(seq)) continue;
    const before = seq.items.length;
    seq.items = seq.items.filter((it) => !(Y.isMap(it) && it.get('name') === ctx));
    changed ||= seq.items.length !== before;
  }
  // As kind does: no current context rather than one that names nothing.
  if (doc.get('current-context') === ctx) {
    doc.set('current-context', '');
    changed = true;
  }
  if (changed) save(path, doc);
  return changed;
}
