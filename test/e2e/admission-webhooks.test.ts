// Admission webhooks against a real `skiff server`, called over HTTPS on a webhook server written
// here (behind a Service and its Endpoints, trusted through caBundle), driven with kubectl 1.27 and
// 1.33 and @kubernetes/client-node: a validating webhook's denial, a mutating one's JSON patch and
// reinvocation, failurePolicy Ignore and Fail while the webhook is down, a namespaceSelector, a
// timeout, `--dry-run=server`, warnings, misbehaving webhooks and the metrics upstream names.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { TestServer, eventually } from '../support/cluster.js';
import { TestWebhookServer, admissionAnswer, reviewRequest } from '../support/webhook-server.js';

const NS = 'webhook-system';

interface HookSpec {
  name: string;
  path: string;
  rules?: string;
  extra?: string;
  clientConfig?: string;
}

function webhookYaml(kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', name: string, caBundle: string, hooks: HookSpec[]): string {
  const entries = hooks.map(
    (h) => `- name: ${h.name}
  admissionReviewVersions: [v1]
  sideEffects: None
  clientConfig:
${h.clientConfig ?? `    service: {namespace: ${NS}, name: hooks, path: ${h.path}}\n    caBundle: ${caBundle}`}
  rules:
${h.rules ?? '  - {operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}'}
${h.extra ?? ''}`,
  );
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}
metadata:
  name: ${name}
webhooks:
${entries.join('\n')}
`;
}

function labelsOf(review: Record<string, unknown>): Record<string, string> {
  const obj = reviewRequest(review).object as { metadata?: { labels?: Record<string, string> } } | null;
  return obj?.metadata?.labels ?? {};
}

describe('admission webhooks', () => {
  const s = new TestServer('webhooks');
  const hooks = new TestWebhookServer();
  /** Calls of the reinvocable mutating webhook, by object name. */
  const aCalls = new Map<string, number>();

  before(async () => {
    await hooks.start([`hooks.${NS}.svc`]);
    hooks.handlers.set('/deny', (r) => (labelsOf(r).deny === 'yes' ? admissionAnswer(r, { allowed: false, message: 'label deny=yes is not allowed', code: 403 }) : admissionAnswer(r, { allowed: true, warnings: ['checked by the deny webhook'] })));
    hooks.handlers.set('/mutate-a', (r) => {
      const name = String((reviewRequest(r).object as { metadata?: { name?: string } }).metadata?.name);
      const n = (aCalls.get(name) ?? 0) + 1;
      aCalls.set(name, n);
      return admissionAnswer(r, { allowed: true, patch: [{ op: 'add', path: '/metadata/labels/a-calls', value: String(n) }] });
    });
    hooks.handlers.set('/mutate-b', (r) => {
      const ann = (reviewRequest(r).object as { metadata?: { annotations?: Record<string, string> } }).metadata?.annotations ?? {};
      if (ann.b === 'done') return admissionAnswer(r, { allowed: true });
      return admissionAnswer(r, { allowed: true, patch: [{ op: 'add', path: '/metadata/annotations', value: { ...ann, b: 'done' } }] });
    });
    hooks.handlers.set('/slow', () => 'hang');
    hooks.handlers.set('/garbage', () => 'garbage');
    hooks.handlers.set('/close', () => 'close');
    hooks.handlers.set('/deny-all', (r) => admissionAnswer(r, { allowed: false, message: 'nothing passes here' }));
    await s.start();
    await s.k(['create', 'namespace', NS]);
    await s.k(['create', 'namespace', 'hooked']);
    await s.k(['label', 'namespace', 'hooked', 'webhooks=on']);
    await s.k(['create', 'namespace', 'plain']);
    // The webhook's Service has no selector: its Endpoints name the server above, as an operator's would name its pod.
    await s.k(['apply', '-f', '-'], {
      input: `${hooks.serviceYaml(NS, 'hooks')}---
apiVersion: v1
kind: Service
metadata: {name: down, namespace: ${NS}}
spec:
  ports: [{name: https, port: 443}]
`,
    });
  });
  after(async () => {
    await s.stop();
    await hooks.stop();
    s.cleanup();
  });

  it('serves both kinds with upstream defaults, columns and validation', async () => {
    await s.k(['apply', '-f', '-'], {
      input: webhookYaml('ValidatingWebhookConfiguration', 'deny', hooks.caBundle, [{ name: 'deny.skiff.test', path: '/deny', extra: '  namespaceSelector: {matchLabels: {webhooks: "on"}}' }]),
    });
    const got = JSON.parse(await s.k(['get', 'validatingwebhookconfiguration', 'deny', '-o', 'json'])) as { webhooks: Record<string, unknown>[] };
    const w = got.webhooks[0]!;
    assert.equal(w.failurePolicy, 'Fail');
    assert.equal(w.matchPolicy, 'Equivalent');
    assert.equal(w.timeoutSeconds, 10);
    assert.deepEqual(w.objectSelector, {});
    assert.equal((w.clientConfig as { service: { port: number } }).service.port, 443);
    assert.equal((w.rules as { scope: string }[])[0]!.scope, '*');
    const table = await s.k(['get', 'validatingwebhookconfigurations'], { version: '1.27' });
    assert.match(table, /NAME\s+WEBHOOKS\s+AGE\n+deny\s+1\s+/);
    const bad = await s.kubectl(['apply', '-f', '-'], {
      input: webhookYaml('ValidatingWebhookConfiguration', 'bad', hooks.caBundle, [{ name: 'short', path: '/deny', extra: '  sideEffects: Some\n  timeoutSeconds: 31' }]).replace('  sideEffects: None\n', ''),
    });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /webhooks\[0\]\.name: Invalid value: "short": should be a domain with at least three segments separated by dots/);
    assert.match(bad.stderr, /webhooks\[0\]\.sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"/);
    assert.match(bad.stderr, /webhooks\[0\]\.timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds/);
    const discovery = await s.k(['api-resources', '--api-group', 'admissionregistration.k8s.io']);
    assert.match(discovery, /mutatingwebhookconfigurations/);
    assert.match(discovery, /validatingwebhookconfigurations/);
  });

  it('a validating webhook denies with its message, only in namespaces its namespaceSelector picks', async () => {
    for (const version of ['1.27', '1.33']) {
      const denied = await s.kubectl(['create', 'configmap', `denied-${version.replace('.', '')}`, '-n', 'hooked', '--from-literal=a=b', '-o', 'name', '--dry-run=none'], { version });
      assert.equal(denied.code, 0, denied.stderr);
      const yaml = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: no-${version.replace('.', '')}, namespace: hooked, labels: {deny: "yes"}}\n`;
      const r = await s.kubectl(['apply', '-f', '-'], { version, input: yaml });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /admission webhook "deny\.skiff\.test" denied the request: label deny=yes is not allowed/);
      // The same object where the selector does not pick the namespace goes through.
      await s.k(['apply', '-f', '-'], { version, input: yaml.replace('namespace: hooked', 'namespace: plain') });
    }
    // Warnings from an allowing webhook reach the client.
    const warned = await s.kubectl(['create', 'configmap', 'warned', '-n', 'hooked']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: checked by the deny webhook/);
    // client-node reads the same Status.
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await assert.rejects(core.createNamespacedConfigMap({ namespace: 'hooked', body: { metadata: { name: 'cn', labels: { deny: 'yes' } } } }), (e: { code?: number; body?: string }) => {
      assert.equal(e.code, 403);
      const status = JSON.parse(String(e.body)) as { message: string; kind: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.message, 'admission webhook "deny.skiff.test" denied the request: label deny=yes is not allowed');
      return true;
    });
    const metrics = await s.k(['get', '--raw', '/metrics']);
    assert.match(metrics, /apiserver_admission_webhook_rejection_count\{name="deny\.skiff\.test",type="validating",operation="CREATE",error_type="no_error",rejection_code="403"\} [1-9]/);
    assert.match(metrics, /apiserver_admission_webhook_admission_duration_seconds_count\{name="deny\.skiff\.test",type="validating",operation="CREATE",rejected="false"\} [1-9]/);
  });

  it('mutating webhooks patch with JSONPatch, and one with IfNeeded is called again after a later one changed the object', async () => {
    const selector = '  objectSelector: {matchLabels: {mutate: me}}';
    await s.k(['apply', '-f', '-'], {
      input: [
        webhookYaml('MutatingWebhookConfiguration', 'a-first', hooks.caBundle, [{ name: 'a.skiff.test', path: '/mutate-a', extra: `${selector}\n  reinvocationPolicy: IfNeeded` }]),
        webhookYaml('MutatingWebhookConfiguration', 'b-second', hooks.caBundle, [{ name: 'b.skiff.test', path: '/mutate-b', extra: selector }]),
      ].join('---\n'),
    });
    await s.k(['apply', '-f', '-'], { version: '1.33', input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: patched, namespace: plain, labels: {mutate: me}}\ndata: {x: "1"}\n' });
    const cm = JSON.parse(await s.k(['get', 'configmap', 'patched', '-n', 'plain', '-o', 'json'], { version: '1.27' })) as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    assert.equal(cm.metadata.annotations.b, 'done');
    // a ran, b changed the object after it, so a ran once more: its second patch is what was stored.
    assert.equal(aCalls.get('patched'), 2);
    assert.equal(cm.metadata.labels['a-calls'], '2');
    // An object the selector does not pick is left alone.
    await s.k(['create', 'configmap', 'unpatched', '-n', 'plain']);
    const plain = JSON.parse(await s.k(['get', 'configmap', 'unpatched', '-n', 'plain', '-o', 'json'])) as { metadata: { labels?: Record<string, string> } };
    assert.equal(plain.metadata.labels?.['a-calls'], undefined);
  });

  it('--dry-run=server reaches webhooks with sideEffects None, which see dryRun, and stores nothing', async () => {
    const before = hooks.callsTo('/mutate-b').length;
    const out = await s.k(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dry, namespace: plain, labels: {mutate: me}}\n' });
    const obj = JSON.parse(out) as { metadata: { annotations: Record<string, string> } };
    assert.equal(obj.metadata.annotations.b, 'done');
    const calls = hooks.callsTo('/mutate-b').slice(before);
    assert.ok(calls.length > 0);
    assert.equal(reviewRequest(calls[0]!).dryRun, true);
    const missing = await s.kubectl(['get', 'configmap', 'dry', '-n', 'plain']);
    assert.notEqual(missing.code, 0);
  });

  it('failurePolicy Ignore lets writes through while the webhook is down; Fail refuses them with the call failure', async () => {
    await s.k(['apply', '-f', '-'], {
      input: webhookYaml('ValidatingWebhookConfiguration', 'down', hooks.caBundle, [
        { name: 'ignore.skiff.test', path: '/', clientConfig: `    service: {namespace: ${NS}, name: down}\n    caBundle: ${hooks.caBundle}`, extra: '  failurePolicy: Ignore\n  objectSelector: {matchLabels: {policy: ignore}}' },
        { name: 'fail.skiff.test', path: '/', clientConfig: `    service: {namespace: ${NS}, name: down}\n    caBundle: ${hooks.caBundle}`, extra: '  failurePolicy: Fail\n  objectSelector: {matchLabels: {policy: fail}}' },
        { name: 'closed.skiff.test', path: '/', clientConfig: `    url: https://127.0.0.1:1/closed\n    caBundle: ${hooks.caBundle}`, extra: '  objectSelector: {matchLabels: {policy: closed}}' },
      ]),
    });
    await s.k(['create', 'configmap', 'ignored', '-n', 'plain']).then(() => s.k(['label', 'configmap', 'ignored', '-n', 'plain', 'policy=ignore']));
    const fail = await s.kubectl(['apply', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: failed, namespace: plain, labels: {policy: fail}}\n' });
    assert.notEqual(fail.code, 0);
    assert.match(fail.stderr, /Internal error occurred: failed calling webhook "fail\.skiff\.test": failed to call webhook: Post "https:\/\/down\.webhook-system\.svc:443\/\?timeout=10s": no endpoints available for service "down"/);
    const closed = await s.kubectl(['apply', '-f', '-'], { input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: closed, namespace: plain, labels: {policy: closed}}\n' });
    assert.match(closed.stderr, /failed calling webhook "closed\.skiff\.test": failed to call webhook: Post "https:\/\/127\.0\.0\.1:1\/closed\?timeout=10s": dial tcp 127\.0\.0\.1:1: connect: connection refused/);
    const metrics = await s.k(['get', '--raw', '/metrics']);
    assert.match(metrics, /apiserver_admission_webhook_fail_open_count\{name="ignore\.skiff\.test",type="validating"\} [1-9]/);
    assert.match(metrics, /apiserver_admission_webhook_rejection_count\{name="fail\.skiff\.test",type="validating",operation="CREATE",error_type="calling_webhook_error",rejection_code="503"\} 1/);
    await s.k(['delete', 'validatingwebhookconfiguration', 'down']);
  });

  it('a webhook that hangs fails the write after its timeoutSeconds; one that closes or answers garbage fails it readably; the server stays responsive', async () => {
    await s.k(['apply', '-f', '-'], {
      input: webhookYaml('ValidatingWebhookConfiguration', 'misbehaving', hooks.caBundle, [
        { name: 'slow.skiff.test', path: '/slow', extra: '  timeoutSeconds: 1\n  objectSelector: {matchLabels: {hook: slow}}' },
        { name: 'garbage.skiff.test', path: '/garbage', extra: '  objectSelector: {matchLabels: {hook: garbage}}' },
        { name: 'close.skiff.test', path: '/close', extra: '  objectSelector: {matchLabels: {hook: close}}' },
      ]),
    });
    const cm = (name: string, hook: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: plain, labels: {hook: ${hook}}}\n`;
    const started = Date.now();
    const pending = s.kubectl(['apply', '-f', '-'], { input: cm('slow', 'slow') });
    // While the webhook hangs, other requests are answered at once.
    const t0 = Date.now();
    await s.k(['get', 'namespaces']);
    assert.ok(Date.now() - t0 < 5000);
    const slow = await pending;
    assert.ok(Date.now() - started < 15_000, 'the write waited for the webhook far longer than its timeout');
    assert.match(slow.stderr, /failed calling webhook "slow\.skiff\.test": failed to call webhook: Post "https:\/\/hooks\.webhook-system\.svc:443\/slow\?timeout=1s": context deadline exceeded/);
    const garbage = await s.kubectl(['apply', '-f', '-'], { input: cm('garbage', 'garbage') });
    assert.match(garbage.stderr, /failed calling webhook "garbage\.skiff\.test": failed to call webhook: .*json/);
    const closed = await s.kubectl(['apply', '-f', '-'], { input: cm('close', 'close') });
    assert.match(closed.stderr, /failed calling webhook "close\.skiff\.test": failed to call webhook: Post "https:\/\/hooks\.webhook-system\.svc:443\/close\?timeout=10s": EOF/);
    await s.k(['delete', 'validatingwebhookconfiguration', 'misbehaving']);
  });

  it('never sends webhook configurations to webhooks', async () => {
    await s.k(['apply', '-f', '-'], {
      input: webhookYaml('ValidatingWebhookConfiguration', 'guard', hooks.caBundle, [{ name: 'guard.skiff.test', path: '/deny-all', rules: '  - {operations: ["*"], apiGroups: ["admissionregistration.k8s.io"], apiVersions: ["*"], resources: ["*"]}' }]),
    });
    const before = hooks.callsTo('/deny-all').length;
    // Still editable and deletable: a broken webhook cannot lock out its own repair.
    await s.k(['label', 'validatingwebhookconfiguration', 'guard', 'touched=yes']);
    await s.k(['delete', 'validatingwebhookconfiguration', 'guard']);
    assert.equal(hooks.callsTo('/deny-all').length, before);
    await eventually(async () => (await s.kubectl(['get', 'validatingwebhookconfiguration', 'guard'])).code !== 0, 5000, 'guard gone');
  });
});
