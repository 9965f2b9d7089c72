// A seeded, reproducible fuzzer of the API: requests against every verb of a set of resources
// with mutated JSON, YAML and garbage bodies, deep nesting, huge strings and numbers, invalid
// UTF-8, bad selectors, patches and query parameters, and path tricks. Every answer must be a
// Kubernetes Status (never a 500 for bad input) or a success; the server must stay up. The same
// seed sends the same requests. Loopback only, bounded in count.
import https from 'node:https';
import { seededRandom } from './util.js';

export interface FuzzOptions {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
  seed: number;
  requests: number;
  concurrency?: number;
}

export interface FuzzFinding {
  method: string;
  path: string;
  contentType: string;
  body: string;
  code: number;
  answer: string;
}

export interface FuzzOutcome {
  requests: number;
  byCode: Record<number, number>;
  /** Answers that are not a Status where one was due, or 5xx: what must not happen. */
  findings: FuzzFinding[];
}

const RESOURCES: { path: string; body: () => Record<string, unknown> }[] = [
  { path: '/api/v1/namespaces/fuzz/configmaps', body: () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { a: 'b' } }) },
  { path: '/api/v1/namespaces/fuzz/pods', body: () => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'i', command: ['sleep', '1'], resources: { requests: { cpu: '10m' } } }] } }) },
  { path: '/api/v1/nodes', body: () => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'fuzz-node' }, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }) },
  { path: '/apis/apps/v1/namespaces/fuzz/deployments', body: () => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1, selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } } }) },
  { path: '/apis/coordination.k8s.io/v1/namespaces/fuzz/leases', body: () => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { holderIdentity: 'h', leaseDurationSeconds: 10 } }) },
  { path: '/api/v1/namespaces/fuzz/services', body: () => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80 }], selector: { app: 'x' } } }) },
  { path: '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', body: () => ({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1', kind: 'FlowSchema', metadata: { name: 'fs' }, spec: { priorityLevelConfiguration: { name: 'global-default' }, rules: [{ subjects: [{ kind: 'User', user: { name: 'x' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }] } }) },
  { path: '/apis/rbac.authorization.k8s.io/v1/namespaces/fuzz/roles', body: () => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] }) },
  { path: '/apis/batch/v1/namespaces/fuzz/jobs', body: () => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'i' }] } } } }) },
];

const WEIRD_VALUES: (() => unknown)[] = [
  () => null,
  () => -1,
  () => 1e308,
  () => -0,
  () => 2 ** 63,
  () => '',
  () => 'x'.repeat(300_000),
  () => '\u0000\ud800',
  () => [],
  () => ({}),
  () => true,
  () => '1Gi',
  () => '../../etc',
  () => ({ $patch: 'delete' }),
  () => [[[[[[]]]]]],
];

const QUERY_TRICKS = [
  'labelSelector=a%20in%20(', 'labelSelector=!!', 'labelSelector=a=b,c!=d', 'fieldSelector=spec.nodeName=x', 'fieldSelector=no.such=1', 'fieldSelector==',
  'limit=-1', 'limit=abc', 'limit=99999999999', 'continue=garbage', 'resourceVersion=abc', 'resourceVersion=-5', 'resourceVersion=99999999999',
  'resourceVersionMatch=Exact', 'watch=maybe&timeoutSeconds=1', 'timeoutSeconds=-1', 'dryRun=Sometimes', 'fieldManager=' + 'm'.repeat(300), 'fieldValidation=Weird',
  'propagationPolicy=Nope', 'gracePeriodSeconds=-9', 'force=yes', 'pretty=1', '%zz=1', 'allowWatchBookmarks=true&watch=true&timeoutSeconds=1',
];

const CONTENT_TYPES = ['application/json', 'application/yaml', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json', 'application/apply-patch+yaml', 'application/vnd.kubernetes.protobuf', 'text/plain', ''];

function nest(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** Mutates `obj` at a random place: a value swapped for a weird one, a field removed, a nested bomb. */
function mutate(r: () => number, obj: unknown, depth = 0): unknown {
  if (obj === null || typeof obj !== 'object' || depth > 6) return r() < 0.5 ? WEIRD_VALUES[Math.floor(r() * WEIRD_VALUES.length)]!() : obj;
  const o = Array.isArray(obj) ? [...obj] : { ...(obj as Record<string, unknown>) };
  const keys = Object.keys(o);
  if (keys.length === 0 || r() < 0.15) {
    (o as Record<string, unknown>)[r() < 0.5 ? 'extra' : 'metadata'] = r() < 0.3 ? nest(1 + Math.floor(r() * 2_000)) : WEIRD_VALUES[Math.floor(r() * WEIRD_VALUES.length)]!();
    return o;
  }
  const k = keys[Math.floor(r() * keys.length)]!;
  const roll = r();
  if (roll < 0.2) delete (o as Record<string, unknown>)[k];
  else (o as Record<string, unknown>)[k] = mutate(r, (o as Record<string, unknown>)[k], depth + 1);
  return o;
}

interface Planned {
  method: string;
  path: string;
  contentType: string;
  body: Buffer | undefined;
}

function plan(r: () => number): Planned {
  const res = RESOURCES[Math.floor(r() * RESOURCES.length)]!;
  const base = res.body();
  const name = (base.metadata as { name: string }).name;
  const methods = ['GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE'];
  const method = methods[Math.floor(r() * methods.length)]!;
  let path = method === 'POST' || (method === 'GET' && r() < 0.5) || (method === 'DELETE' && r() < 0.1) ? res.path : `${res.path}/${name}`;
  if (r() < 0.1) path += ['/status', '/scale', '/binding', '/eviction', '/log', '/../../x', '/%2e%2e', '//', '/a/b/c'][Math.floor(r() * 9)];
  if (r() < 0.4) path += `?${QUERY_TRICKS[Math.floor(r() * QUERY_TRICKS.length)]}`;
  if (method === 'GET' || (method === 'DELETE' && r() < 0.7)) return { method, path, contentType: '', body: undefined };
  const contentType = method === 'PATCH' ? CONTENT_TYPES[2 + Math.floor(r() * 4)]! : r() < 0.8 ? 'application/json' : CONTENT_TYPES[Math.floor(r() * CONTENT_TYPES.length)]!;
  const roll = r();
  let body: Buffer;
  if (roll < 0.55) body = Buffer.from(JSON.stringify(mutate(r, base)));
  else if (roll < 0.65) body = Buffer.from(JSON.stringify(base).slice(0, Math.floor(r() * 60)));
  else if (roll < 0.72) body = Buffer.concat([Buffer.from('{"metadata":{"name":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}')]);
  else if (roll < 0.78) body = Buffer.from(`[${'{"op":"add","path":"/x","value":1},'.repeat(Math.floor(r() * 2000))}{"op":"test","path":"/metadata/name","value":"zz"}]`);
  else if (roll < 0.84) body = Buffer.from(`a: [${'['.repeat(Math.floor(r() * 5000))}\nb: &x *x\n`);
  else if (roll < 0.87) body = Buffer.from(`{"a":${'1'.repeat(400)}e99999}`);
  else if (roll < 0.9) body = Buffer.from(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`);
  else body = Buffer.from(Array.from({ length: Math.floor(r() * 4096) }, () => Math.floor(r() * 256)));
  return { method, path, contentType, body };
}

function send(agent: https.Agent, server: string, p: Planned): Promise<{ code: number; body: string; contentType: string }> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (p.contentType) headers['Content-Type'] = p.contentType;
    // Node sends a DELETE's body without a length unless told: the server would read it as the next request.
    if (p.body) headers['Content-Length'] = String(p.body.length);
    const req = https.request(`${server}${p.path}`, { method: p.method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        if (size < 4096) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').slice(0, 4096), contentType: String(res.headers['content-type'] ?? '') }));
      res.on('error', () => resolve({ code: 0, body: '', contentType: '' }));
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ code: 0, body: '', contentType: '' }));
    req.end(p.body);
  });
}

export async function fuzz(opts: FuzzOptions): Promise<FuzzOutcome> {
  const r = seededRandom(opts.seed);
  const agent = new https.Agent({ keepAlive: true, maxSockets: opts.concurrency ?? 16, ca: opts.caPem, cert: opts.certPem, key: opts.keyPem });
  const outcome: FuzzOutcome = { requests: 0, byCode: {}, findings: [] };
  // Planned up front from the seed, so the same seed sends the same requests whatever the timing.
  const planned = Array.from({ length: opts.requests }, () => plan(r));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < planned.length) {
      const p = planned[next++]!;
      const a = await send(agent, opts.server, p);
      outcome.requests++;
      outcome.byCode[a.code] = (outcome.byCode[a.code] ?? 0) + 1;
      const status = a.code >= 400 && a.contentType.includes('json') && /"kind":"Status"/.test(a.body);
      // 503 and 504 are answers too (storage unavailable; a resourceVersion not reached in time, as upstream's Timeout).
      const serverFault = a.code >= 500 && !(status && (a.code === 503 || a.code === 504));
      if (serverFault || a.code === 0 || (a.code >= 400 && !status)) {
        if (outcome.findings.length < 50) outcome.findings.push({ method: p.method, path: p.path.slice(0, 200), contentType: p.contentType, body: (p.body ?? Buffer.alloc(0)).toString('utf8').slice(0, 300), code: a.code, answer: a.body.slice(0, 300) });
      }
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 16 }, worker));
  agent.destroy();
  return outcome;
}
