// The aggregation layer against a real `skiff server`: an extension API server written here (HTTPS,
// discovery and one resource, trusting only clients whose certificate the front-proxy CA from
// kube-system/extension-apiserver-authentication signed, and reading who asks from X-Remote-User)
// behind an APIService whose Service and Endpoints point at it on loopback. kubectl 1.27 and 1.33
// and @kubernetes/client-node reach it through skiff; its Service losing its endpoints makes the
// APIService unavailable with upstream's reason, and requests then get a 503 Status.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import * as k8s from '@kubernetes/client-node';
import { TestServer, eventually } from '../support/cluster.js';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { parseKubeconfig } from '../../src/pki/kubeconfig.js';

const GROUP = 'wardle.example.com';
const VERSION = 'v1alpha1';
const APISERVICE = `${VERSION}.${GROUP}`;

interface Asked {
  user: string;
  groups: string[];
  extra: Record<string, string[]>;
  clientCn: string;
}

/** A minimal extension API server: what a real one (built on k8s.io/apiserver) checks and answers. */
class ExtensionServer {
  private server?: https.Server;
  port = 0;
  /** Who asked, as the front-proxy headers said, per request. */
  readonly asked: Asked[] = [];
  /** The path of every request that reached it. */
  readonly paths: string[] = [];
  refusedUnauthenticated = 0;

  async start(cert: { certPem: string; keyPem: string }, trust: { requestHeaderCaPem: string; allowedNames: string[]; userHeaders: string[]; groupHeaders: string[]; extraPrefixes: string[] }): Promise<void> {
    this.server = https.createServer({ cert: cert.certPem, key: cert.keyPem, ca: trust.requestHeaderCaPem, requestCert: true, rejectUnauthorized: false }, (req, res) => this.serve(req, res, trust));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  private serve(req: IncomingMessage, res: ServerResponse, trust: { allowedNames: string[]; userHeaders: string[]; groupHeaders: string[]; extraPrefixes: string[] }): void {
    this.paths.push(new URL(req.url ?? '/', 'https://x').pathname);
    const socket = req.socket as TLSSocket;
    const cn = socket.authorized ? String(socket.getPeerCertificate().subject?.CN ?? '') : '';
    // The requestheader rule: identity headers count only on a connection the front-proxy CA vouches for, from an allowed name.
    if (!cn || !trust.allowedNames.includes(cn)) {
      this.refusedUnauthenticated++;
      return json(res, 401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' });
    }
    // One header line per group, as Go's net/http keeps them (Node would join them with commas).
    const header = (name: string): string[] => req.headersDistinct[name.toLowerCase()] ?? [];
    const extra: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(req.headersDistinct)) {
      const prefix = trust.extraPrefixes.find((p) => name.startsWith(p.toLowerCase()));
      if (prefix && values !== undefined) extra[decodeURIComponent(name.slice(prefix.length))] = values;
    }
    const who: Asked = { user: trust.userHeaders.flatMap(header)[0] ?? '', groups: trust.groupHeaders.flatMap(header), extra, clientCn: cn };
    this.asked.push(who);
    const url = new URL(req.url ?? '/', 'https://x');
    const base = `/apis/${GROUP}/${VERSION}`;
    if (url.pathname === base) {
      return json(res, 200, {
        kind: 'APIResourceList',
        apiVersion: 'v1',
        groupVersion: `${GROUP}/${VERSION}`,
        resources: [{ name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list', 'watch'], shortNames: ['fl'] }],
      });
    }
    const m = new RegExp(`^${base}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(url.pathname);
    if (!m) return json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'the server could not find the requested resource' });
    const ns = m[1]!;
    const flunder = (name: string): Record<string, unknown> => ({ apiVersion: `${GROUP}/${VERSION}`, kind: 'Flunder', metadata: { name, namespace: ns, creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { askedBy: who.user, groups: who.groups } });
    if (m[2]) return m[2] === 'alpha' ? json(res, 200, flunder('alpha')) : json(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: `flunders.${GROUP} "${m[2]}" not found` });
    if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: flunder('alpha') })}\n`);
      return; // stays open, as a watch does
    }
    if ((req.headers.accept ?? '').includes('as=Table')) {
      return json(res, 200, {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: {},
        columnDefinitions: [
          { name: 'Name', type: 'string', format: 'name', description: 'name', priority: 0 },
          { name: 'Asked-By', type: 'string', format: '', description: 'who asked', priority: 0 },
        ],
        rows: [{ cells: ['alpha', who.user], object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'alpha', namespace: ns } } }],
      });
    }
    return json(res, 200, { apiVersion: `${GROUP}/${VERSION}`, kind: 'FlunderList', metadata: {}, items: [flunder('alpha')] });
  }

  close(): void {
    this.server?.closeAllConnections();
    this.server?.close();
  }
}

function json(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('aggregated APIs behind an APIService', () => {
  const s = new TestServer('aggregation');
  const ext = new ExtensionServer();
  let admin: { server: string; caPem: string; certPem: string; keyPem: string };

  /** A raw HTTPS request to skiff as the admin (status, headers and the first bytes of the body). */
  const raw = (path: string, opts: { firstChunkOnly?: boolean; headers?: Record<string, string> } = {}): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const req = https.get(`${admin.server}${path}`, { ca: admin.caPem, cert: admin.certPem, key: admin.keyPem, headers: { accept: 'application/json', ...opts.headers }, timeout: 20_000 }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
          if (opts.firstChunkOnly) {
            res.destroy();
            resolve({ status: res.statusCode ?? 0, body });
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('timeout', () => req.destroy(new Error(`${path}: no answer in 20s`)));
      req.on('error', reject);
    });

  const condition = async (): Promise<{ status?: string; reason?: string; message?: string }> => {
    const out = await s.k(['get', 'apiservice', APISERVICE, '-o', 'json']);
    const conditions = (JSON.parse(out) as { status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }).status?.conditions ?? [];
    return conditions.find((c) => c.type === 'Available') ?? {};
  };

  before(async () => {
    await s.start();
    const kc = parseKubeconfig(readFileSync(s.kubeconfig, 'utf8'), (p) => readFileSync(p, 'utf8'));
    admin = { server: kc.server, caPem: kc.caPem!, certPem: kc.clientCertPem!, keyPem: kc.clientKeyPem! };
    // Everything a real extension server reads to trust the aggregation layer, from the ConfigMap skiff publishes.
    const cm = JSON.parse(await s.k(['get', 'configmap', '-n', 'kube-system', 'extension-apiserver-authentication', '-o', 'json'])) as { data: Record<string, string> };
    const list = (key: string): string[] => JSON.parse(cm.data[key]!) as string[];
    const ca = await createCertificateAuthority('wardle-ca');
    const serving = await issueCertificate(ca, { commonName: 'ext-api', hosts: ['ext-api.default.svc'], usage: 'server' });
    await ext.start(serving, {
      requestHeaderCaPem: cm.data['requestheader-client-ca-file']!,
      allowedNames: list('requestheader-allowed-names'),
      userHeaders: list('requestheader-username-headers'),
      groupHeaders: list('requestheader-group-headers'),
      extraPrefixes: list('requestheader-extra-headers-prefix'),
    });
    assert.ok(cm.data['client-ca-file']?.includes('BEGIN CERTIFICATE'));
    await s.k(['apply', '-f', '-'], {
      input: `apiVersion: v1
kind: Service
metadata: {name: ext-api, namespace: default}
spec:
  ports: [{port: 443, targetPort: ${ext.port}}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: ext-api, namespace: default}
subsets:
- addresses: [{ip: 127.0.0.1}]
  ports: [{port: ${ext.port}}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: ${APISERVICE}}
spec:
  group: ${GROUP}
  version: ${VERSION}
  groupPriorityMinimum: 1000
  versionPriority: 15
  service: {namespace: default, name: ext-api}
  caBundle: ${Buffer.from(ca.certPem).toString('base64')}
`,
    });
    await eventually(async () => (await condition()).status === 'True', 20_000, 'the APIService to become Available');
  });
  after(async () => {
    ext.close();
    await s.stop();
    s.cleanup();
  });

  it('lists APIServices as a real cluster does: local ones for the built-in group-versions, its own with its Service', async () => {
    for (const version of ['1.27', '1.33']) {
      const out = await s.k(['get', 'apiservices'], { version });
      assert.match(out, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE/m);
      assert.match(out, /^v1\.\s+Local\s+True/m);
      assert.match(out, /^v1\.apps\s+Local\s+True/m);
      assert.match(out, new RegExp(`^${APISERVICE.replace(/\./g, '\\.')}\\s+default/ext-api\\s+True`, 'm'));
    }
    const refused = await s.kubectl(['apply', '-f', '-'], { input: `apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.wrong.example.com}\nspec: {group: other.example.com, version: v1, groupPriorityMinimum: 100, versionPriority: 10, insecureSkipTLSVerify: true}\n` });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /metadata\.name: Invalid value: "v1\.wrong\.example\.com": must be `spec\.version\+"\."\+spec\.group`: "v1\.other\.example\.com"/);
    assert.match(refused.stderr, /spec\.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify/);
  });

  it('serves the extension server\'s resources through kubectl 1.27 and 1.33, with the caller\'s identity', async () => {
    for (const version of ['1.27', '1.33']) {
      const out = await s.k(['get', 'flunders', '-n', 'default'], { version });
      assert.match(out, /^NAME\s+ASKED-BY/m);
      assert.match(out, /^alpha\s+skiff-admin/m);
      const one = JSON.parse(await s.k(['get', 'fl', 'alpha', '-n', 'default', '-o', 'json'], { version })) as { spec: { askedBy: string; groups: string[] } };
      assert.equal(one.spec.askedBy, 'skiff-admin');
      assert.ok(one.spec.groups.includes('system:masters'), JSON.stringify(one.spec.groups));
    }
    // Impersonation: the extension server is told the impersonated user (whom RBAC lets read flunders), never headers a client made up.
    await s.k(['create', 'clusterrole', 'flunder-reader', '--verb', 'get,list', '--resource', `flunders.${GROUP}`]);
    await s.k(['create', 'clusterrolebinding', 'devs-read-flunders', '--clusterrole', 'flunder-reader', '--group', 'devs']);
    const asJane = JSON.parse(await s.k(['get', 'flunder', 'alpha', '-n', 'default', '-o', 'json', '--as', 'jane', '--as-group', 'devs'])) as { spec: { askedBy: string; groups: string[] } };
    assert.equal(asJane.spec.askedBy, 'jane');
    assert.deepEqual(asJane.spec.groups, ['devs', 'system:authenticated']);
    const last = ext.asked[ext.asked.length - 1]!;
    assert.equal(last.clientCn, 'front-proxy-client');
    const withExtra = await raw(`/apis/${GROUP}/${VERSION}/namespaces/default/flunders/alpha`, {
      headers: { 'Impersonate-User': 'jane', 'Impersonate-Group': 'devs', 'Impersonate-Extra-Scopes': 'view', 'X-Remote-User': 'mallory', 'X-Remote-Group': 'system:masters' },
    });
    assert.equal(withExtra.status, 200, withExtra.body);
    const seen = ext.asked[ext.asked.length - 1]!;
    assert.deepEqual([seen.user, seen.groups, seen.extra], ['jane', ['devs', 'system:authenticated'], { scopes: ['view'] }]);
    const missing = await s.kubectl(['get', 'flunder', 'beta', '-n', 'default']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /flunders\.wardle\.example\.com "beta" not found/);
  });

  it('lists the aggregated group in discovery', async () => {
    for (const version of ['1.27', '1.33']) {
      const out = await s.k(['api-resources', '--api-group', GROUP], { version });
      assert.match(out, /^flunders\s+fl\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/m);
    }
    const groups = JSON.parse((await raw('/apis')).body) as { groups: { name: string; preferredVersion: { version: string } }[] };
    assert.equal(groups.groups.find((g) => g.name === GROUP)?.preferredVersion.version, VERSION);
    assert.equal((JSON.parse((await raw(`/apis/${GROUP}`)).body) as { name: string }).name, GROUP);
    // Its kinds have an (open) OpenAPI schema beside the built-in ones, in both documents.
    const index = JSON.parse((await raw('/openapi/v3')).body) as { paths: Record<string, { serverRelativeURL: string }> };
    const doc = await raw(index.paths[`apis/${GROUP}/${VERSION}`]!.serverRelativeURL);
    assert.equal(doc.status, 200);
    assert.match(doc.body, /"kind":"Flunder"/);
    assert.equal((await raw('/openapi/v2')).status, 200);
  });

  it('reaches it from @kubernetes/client-node, and streams a watch through', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: 'flunders' })) as { items: { metadata: { name: string }; spec: { askedBy: string } }[] };
    assert.deepEqual(list.items.map((i) => [i.metadata.name, i.spec.askedBy]), [['alpha', 'skiff-admin']]);
    const watch = await raw(`/apis/${GROUP}/${VERSION}/namespaces/default/flunders?watch=true`, { firstChunkOnly: true });
    assert.equal(watch.status, 200);
    assert.match(watch.body, /"type":"ADDED"/);
  });

  it('refuses an upgrade request (exec, attach, port-forward) to an aggregated resource with a 400 Status, never reaching the extension server', async () => {
    const path = `/apis/${GROUP}/${VERSION}/namespaces/default/flunders/alpha/exec`;
    const r = await raw(`${path}?command=true`, { headers: { connection: 'Upgrade', upgrade: 'SPDY/3.1' } });
    assert.equal(r.status, 400, r.body);
    const status = JSON.parse(r.body) as { kind: string; reason: string; message: string };
    assert.deepEqual([status.kind, status.reason, status.message], ['Status', 'BadRequest', 'skiff does not proxy upgrade requests (exec, attach, port-forward) to aggregated APIs']);
    assert.ok(!ext.paths.includes(path));
  });

  it('marks it unavailable when its Service has no endpoints, and answers 503 with a Status', async () => {
    await s.k(['patch', 'endpoints', 'ext-api', '-n', 'default', '--type', 'merge', '-p', '{"subsets":[]}']);
    const c = await eventually(async () => {
      const now = await condition();
      return now.status === 'False' ? now : undefined;
    }, 20_000, 'Available=False');
    assert.equal(c.reason, 'MissingEndpoints');
    assert.equal(c.message, 'endpoints for service/ext-api in "default" have no addresses with port name ""');
    const out = await s.k(['get', 'apiservices', APISERVICE]);
    assert.match(out, /False \(MissingEndpoints\)/);
    const r = await raw(`/apis/${GROUP}/${VERSION}/namespaces/default/flunders`);
    assert.equal(r.status, 503);
    const status = JSON.parse(r.body) as { kind: string; reason: string; message: string; code: number };
    assert.deepEqual([status.kind, status.reason, status.message, status.code], ['Status', 'ServiceUnavailable', 'service unavailable', 503]);
    const k = await s.kubectl(['get', 'flunders', '-n', 'default']);
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Error from server \(ServiceUnavailable\): service unavailable/);
    const metrics = await s.k(['get', '--raw', '/metrics']);
    assert.match(metrics, new RegExp(`aggregator_unavailable_apiservice\\{name="${APISERVICE.replace(/\./g, '\\.')}"\\} 1`));
    assert.match(metrics, /aggregator_unavailable_apiservice\{name="v1\.apps"\} 0/);
  });

  it('fails the discovery check, quickly, when nothing listens at the endpoint', async () => {
    // A port nothing listens on: connection refused, never a hang.
    await s.k(['patch', 'endpoints', 'ext-api', '-n', 'default', '--type', 'merge', '-p', JSON.stringify({ subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 1 }] }] })]);
    const c = await eventually(async () => {
      const now = await condition();
      return now.reason === 'FailedDiscoveryCheck' ? now : undefined;
    }, 20_000, 'FailedDiscoveryCheck');
    assert.equal(c.status, 'False');
    assert.match(c.message ?? '', /^failing or missing response from https:\/\/127\.0\.0\.1:1\/apis\/wardle\.example\.com\/v1alpha1: /);
    // Back to the server: available again.
    await s.k(['patch', 'endpoints', 'ext-api', '-n', 'default', '--type', 'merge', '-p', JSON.stringify({ subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: ext.port }] }] })]);
    await eventually(async () => (await condition()).status === 'True', 20_000, 'Available again');
    assert.match(await s.k(['get', 'flunders', '-n', 'default']), /^alpha/m);
  });
});
