// ResourceQuota through real kubectl (1.33 and 1.27) and @kubernetes/client-node: the controller
// counts what a namespace holds, admission refuses what would exceed a quota with upstream's 403
// messages and charges what fits at once, and a deleted pod gives its share back.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { TestServer, eventually } from '../support/cluster.js';

const pod = (name: string, resources = '', extra = '') => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: q}
spec:
  containers:
  - name: app
    image: busybox
${resources}${extra}`;

const sized = (cpu: string, memory: string) => `    resources:
      requests: {cpu: ${cpu}, memory: ${memory}}
      limits: {cpu: ${cpu}, memory: ${memory}}
`;

interface Quota {
  status?: { hard?: Record<string, string>; used?: Record<string, string> };
}

describe('ResourceQuota with kubectl and client-node', () => {
  const s = new TestServer('quota');
  const quota = async (name: string): Promise<Quota> => JSON.parse(await s.k(['-n', 'q', 'get', 'quota', name, '-o', 'json'])) as Quota;
  const used = async (name: string) => (await quota(name)).status?.used;

  before(async () => {
    await s.start();
    await s.k(['create', 'namespace', 'q']);
    await s.k(['-n', 'q', 'create', 'quota', 'compute', '--hard=pods=3,requests.cpu=1,requests.memory=1Gi,limits.cpu=1,limits.memory=1Gi']);
    await s.k(['-n', 'q', 'create', 'quota', 'objects', '--hard=configmaps=3,count/deployments.apps=1']);
    // The controller counts what is there: kube-root-ca.crt is one of the namespace's ConfigMaps.
    await eventually(async () => (await used('objects'))?.configmaps === '1' && (await used('compute'))?.pods === '0', 20_000, 'both quotas counted');
  });
  after(async () => {
    await s.stop();
    s.cleanup();
  });

  it('shows status.hard and status.used as kubectl get and describe print them', async () => {
    const rows = (await s.k(['-n', 'q', 'get', 'quota'])).trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(rows[0], ['NAME', 'AGE', 'REQUEST', 'LIMIT']);
    const compute = rows.find((r) => r[0] === 'compute')!;
    assert.equal(compute[2], 'pods: 0/3, requests.cpu: 0/1, requests.memory: 0/1Gi');
    assert.equal(compute[3], 'limits.cpu: 0/1, limits.memory: 0/1Gi');
    const described = await s.k(['-n', 'q', 'describe', 'quota', 'objects']);
    assert.match(described, /^Name:\s+objects$/m);
    assert.match(described, /^configmaps\s+1\s+3$/m);
    assert.match(described, /^count\/deployments\.apps\s+0\s+1$/m);
    // kubectl describe namespace lists each quota with its usage, as against a real cluster.
    const ns = await s.k(['describe', 'namespace', 'q']);
    assert.match(ns, /^\s*Name:\s+objects$/m);
    assert.match(ns, /^\s*configmaps\s+1\s+3$/m);
    assert.match(ns, /^\s*requests\.cpu\s+0\s+1$/m);
  });

  it('refuses a pod that does not say what it needs of a quota on cpu and memory', async () => {
    const r = await s.kubectl(['create', '-f', '-'], { input: pod('bare') });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /^Error from server \(Forbidden\): error when creating "STDIN": pods "bare" is forbidden: failed quota: compute: must specify limits\.cpu for: app; limits\.memory for: app; requests\.cpu for: app; requests\.memory for: app$/m,
    );
  });

  it('charges a pod that fits at once and refuses the one that would exceed', async () => {
    await s.k(['create', '-f', '-'], { input: pod('first', sized('600m', '256Mi')) });
    // Charged by admission, not waiting for the controller: the very next read shows it.
    assert.deepEqual(await used('compute'), { pods: '1', 'requests.cpu': '600m', 'requests.memory': '256Mi', 'limits.cpu': '600m', 'limits.memory': '256Mi' });
    const r = await s.kubectl(['create', '-f', '-'], { version: '1.27', input: pod('second', sized('500m', '256Mi')) });
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /^Error from server \(Forbidden\): error when creating "STDIN": pods "second" is forbidden: exceeded quota: compute, requested: limits\.cpu=500m,requests\.cpu=500m, used: limits\.cpu=600m,requests\.cpu=600m, limited: limits\.cpu=1,requests\.cpu=1$/m,
    );
    // A dry run is checked but charges nothing.
    await s.k(['create', '--dry-run=server', '-f', '-'], { input: pod('dry', sized('100m', '64Mi')) });
    assert.equal((await used('compute'))?.['requests.cpu'], '600m');
  });

  it('gives a deleted pod its share back, so the next one fits', async () => {
    await s.k(['-n', 'q', 'delete', 'pod', 'first', '--grace-period=0', '--force', '--wait=false']);
    await eventually(async () => (await used('compute'))?.['requests.cpu'] === '0', 20_000, 'the controller to recount after the deletion');
    await s.k(['create', '-f', '-'], { input: pod('second', sized('500m', '256Mi')) });
    assert.equal((await used('compute'))?.['requests.cpu'], '500m');
  });

  it('counts objects by their legacy and count/ names, refusing the one past the limit', async () => {
    await s.k(['-n', 'q', 'create', 'configmap', 'a']);
    await s.k(['-n', 'q', 'create', 'configmap', 'b']);
    const r = await s.kubectl(['-n', 'q', 'create', 'configmap', 'c']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /configmaps "c" is forbidden: exceeded quota: objects, requested: configmaps=1, used: configmaps=3, limited: configmaps=3$/m);
    await s.k(['-n', 'q', 'create', 'deployment', 'web', '--image=busybox']);
    const d = await s.kubectl(['-n', 'q', 'create', 'deployment', 'web2', '--image=busybox']);
    assert.match(d.stderr, /deployments\.apps "web2" is forbidden: exceeded quota: objects, requested: count\/deployments\.apps=1, used: count\/deployments\.apps=1, limited: count\/deployments\.apps=1$/m);
  });

  it('counts custom resources by count/<plural>.<group>, from admission and the controller alike', async () => {
    await s.k(['apply', '-f', '-'], {
      input: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.quota.example.com}
spec:
  group: quota.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
    });
    await s.k(['wait', '--for=condition=Established', 'crd/widgets.quota.example.com', '--timeout=20s']);
    await s.k(['create', 'namespace', 'crq']);
    const widget = (name: string) => `apiVersion: quota.example.com/v1\nkind: Widget\nmetadata: {name: ${name}, namespace: crq}\n`;
    await s.k(['create', '-f', '-'], { input: widget('first') });
    await s.k(['-n', 'crq', 'create', 'quota', 'widgets', '--hard=count/widgets.quota.example.com=1']);
    // The controller finds the custom resource through discovery and counts the widget already there.
    await eventually(
      async () => JSON.parse(await s.k(['-n', 'crq', 'get', 'quota', 'widgets', '-o', 'json'])).status?.used?.['count/widgets.quota.example.com'] === '1',
      20_000,
      'the existing widget counted',
    );
    const r = await s.kubectl(['create', '-f', '-'], { input: widget('second') });
    assert.match(r.stderr, /widgets\.quota\.example\.com "second" is forbidden: exceeded quota: widgets, requested: count\/widgets\.quota\.example\.com=1, used: count\/widgets\.quota\.example\.com=1, limited: count\/widgets\.quota\.example\.com=1$/m);
  });

  it('applies a scoped quota only to the pods in its scope', async () => {
    await s.k(['create', 'namespace', 'scoped']);
    await s.k(['-n', 'scoped', 'create', 'quota', 'best-effort', '--hard=pods=1', '--scopes=BestEffort']);
    await eventually(async () => JSON.parse(await s.k(['-n', 'scoped', 'get', 'quota', 'best-effort', '-o', 'json'])).status?.used?.pods === '0', 20_000, 'scoped quota counted');
    const inScoped = (name: string, resources = '') => pod(name, resources).replace('namespace: q', 'namespace: scoped');
    await s.k(['create', '-f', '-'], { input: inScoped('be1') });
    const refused = await s.kubectl(['create', '-f', '-'], { input: inScoped('be2') });
    assert.match(refused.stderr, /pods "be2" is forbidden: exceeded quota: best-effort, requested: pods=1, used: pods=1, limited: pods=1$/m);
    // A pod with requests is not BestEffort: the quota does not cover it.
    await s.k(['create', '-f', '-'], { input: inScoped('burstable', sized('100m', '64Mi')) });
  });

  it('refuses invalid quotas with upstream causes', async () => {
    const r = await s.kubectl(['create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: bad, namespace: q}\nspec:\n  hard: {pods: "1.5", foo: "1", requests.cpu: "-1"}\n  scopes: [BestEffort, NotBestEffort]\n',
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /The ResourceQuota "bad" is invalid: $/m);
    assert.match(r.stderr, /spec\.hard\[foo\]: Invalid value: "foo": must be a standard resource for quota/);
    assert.match(r.stderr, /spec\.hard\[pods\]: Invalid value: "1500m": must be an integer/);
    assert.match(r.stderr, /spec\.hard\[requests\.cpu\]: Invalid value: "-1": must be greater than or equal to 0/);
    // BestEffort pods request nothing: a quota on requests.cpu cannot be scoped to them.
    assert.match(r.stderr, /spec\.scopes: Invalid value: \[\]core\.ResourceQuotaScope\{"BestEffort", "NotBestEffort"\}: unsupported scope applied to resource/);
    assert.match(r.stderr, /spec\.scopes: Invalid value: .*: conflicting scopes/);
  });

  it('lets only as many concurrent creates through as the quota has room for', async () => {
    await s.k(['create', 'namespace', 'race']);
    await s.k(['-n', 'race', 'create', 'quota', 'few', '--hard=count/secrets=2']);
    await eventually(async () => JSON.parse(await s.k(['-n', 'race', 'get', 'quota', 'few', '-o', 'json'])).status?.used?.['count/secrets'] === '0', 20_000, 'quota counted');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const results = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => core.createNamespacedSecret({ namespace: 'race', body: { metadata: { name: `s${i}` }, stringData: { k: 'v' } } })));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 2);
    for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code?: number }).code, 403);
    assert.equal(JSON.parse(await s.k(['-n', 'race', 'get', 'quota', 'few', '-o', 'json'])).status.used['count/secrets'], '2');
  });

  it('gives a second client the same 403 Status', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await assert.rejects(
      core.createNamespacedPod({
        namespace: 'q',
        body: { metadata: { name: 'third' }, spec: { containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '2', memory: '1Mi' }, limits: { cpu: '2', memory: '1Mi' } } }] } },
      }),
      (e: { code?: number; body?: string }) => {
        assert.equal(e.code, 403);
        const status = JSON.parse(e.body ?? '{}') as { reason?: string; message?: string; details?: { name?: string; kind?: string } };
        assert.equal(status.reason, 'Forbidden');
        assert.deepEqual(status.details, { name: 'third', kind: 'pods' });
        assert.match(status.message ?? '', /exceeded quota: compute, requested: limits\.cpu=2,requests\.cpu=2, used: limits\.cpu=500m,requests\.cpu=500m, limited: limits\.cpu=1,requests\.cpu=1/);
        return true;
      },
    );
  });
});
