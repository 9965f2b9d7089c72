// Which webhooks a write reaches (upstream's rules.Matcher and selectors), and the refusals that
// come before any call: a dry run reaching a webhook that may have side effects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resourceTypeFor } from '../../src/api/registry.js';
import type { ResourceType } from '../../src/api/resource.js';
import { WebhookConfigurations, configuredWebhooks, ruleMatches, shouldCallHook } from '../../src/apiserver/admission/webhook-rules.js';
import { mutatingAdmissionWebhook } from '../../src/apiserver/admission/mutating-webhook.js';
import { validatingAdmissionWebhook, type AdmissionWebhookDeps } from '../../src/apiserver/admission/validating-webhook.js';
import { callAdmissionWebhook, denial } from '../../src/apiserver/admission/admission-review.js';
import type { AdmissionAttributes, Operation } from '../../src/apiserver/admission/plugin.js';
import { WebhookClient } from '../../src/apiserver/webhook/client.js';
import { isStatusError } from '../../src/api/errors.js';
import type { AdmissionWebhook } from '../../src/api/kinds/admission-webhook.js';

const pods = resourceTypeFor('', 'v1', 'pods')!;
const namespaces = resourceTypeFor('', 'v1', 'namespaces')!;
const deployments = resourceTypeFor('apps', 'v1', 'deployments')!;

function attrs(rt: ResourceType, o: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return { operation: 'CREATE', resource: rt, subresource: '', namespace: 'ns', name: 'x', object: { metadata: { name: 'x', labels: { app: 'a' } } }, oldObject: undefined, user: { name: 'u', groups: [] }, dryRun: false, ...o };
}

const hook = (extra: Partial<AdmissionWebhook> = {}): AdmissionWebhook => ({
  name: 'h.skiff.test',
  clientConfig: { url: 'https://127.0.0.1:1/' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
  sideEffects: 'None',
  ...extra,
});

test('rules: operations, groups, versions, resources with subresources, scope', () => {
  const r = (resources: string[], scope: '*' | 'Cluster' | 'Namespaced' = '*', operations: ('CREATE' | 'UPDATE' | '*')[] = ['*']) => ({ operations, apiGroups: ['*'], apiVersions: ['*'], resources, scope });
  const m = (rule: ReturnType<typeof r>, rt: ResourceType, sub = '', ns = 'ns', op: Operation = 'CREATE') => ruleMatches(rule, op, rt, sub, ns);
  assert.equal(m(r(['pods']), pods), true);
  assert.equal(m(r(['pods']), pods, 'status'), false);
  assert.equal(m(r(['pods/status']), pods, 'status'), true);
  assert.equal(m(r(['pods/*']), pods, 'status'), true);
  assert.equal(m(r(['*']), pods, 'status'), false);
  assert.equal(m(r(['*/*']), pods, 'status'), true);
  assert.equal(m(r(['*/status']), deployments, 'status'), true);
  assert.equal(m(r(['*'], 'Cluster'), pods), false);
  assert.equal(m(r(['*'], 'Namespaced'), pods), true);
  // Namespaces are cluster-scoped, even though their requests carry their own name as namespace.
  assert.equal(m(r(['*'], 'Namespaced'), namespaces, '', 'x'), false);
  assert.equal(m(r(['*'], 'Cluster'), namespaces, '', 'x'), true);
  assert.equal(m(r(['*'], '*', ['UPDATE']), pods), false);
});

test('selectors: namespace labels (the namespace itself when written), old or new object labels; a missing namespace fails only a matching webhook', async () => {
  const deps = { namespaceLabels: async (n: string) => (n === 'ns' ? { env: 'prod' } : undefined), equivalents: () => [] };
  const [w] = configuredWebhooks([{ metadata: { name: 'c' }, webhooks: [hook({ namespaceSelector: { matchLabels: { env: 'prod' } }, objectSelector: { matchLabels: { app: 'a' } } })] }]);
  assert.ok(await shouldCallHook(w!, attrs(pods), deps));
  assert.equal(await shouldCallHook(w!, attrs(pods, { object: { metadata: { name: 'x' } } }), deps), undefined);
  assert.ok(await shouldCallHook(w!, attrs(pods, { operation: 'CREATE', object: { metadata: { name: 'x' } }, oldObject: { metadata: { name: 'x', labels: { app: 'a' } } } }), deps));
  await assert.rejects(shouldCallHook(w!, attrs(pods, { namespace: 'gone' }), deps), (e) => isStatusError(e, 'NotFound'));
  const [nsHook] = configuredWebhooks([{ metadata: { name: 'c' }, webhooks: [hook({ rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'] }], namespaceSelector: { matchLabels: { env: 'prod' } } })] }]);
  assert.ok(await shouldCallHook(nsHook!, attrs(namespaces, { namespace: undefined, name: 'new', object: { metadata: { name: 'new', labels: { env: 'prod' } } } }), deps));
  assert.equal(await shouldCallHook(nsHook!, attrs(namespaces, { namespace: undefined, name: 'new', object: { metadata: { name: 'new' } } }), deps), undefined);
  // A webhook whose rules do not match never fails the write, whatever its selectors.
  const [other] = configuredWebhooks([{ metadata: { name: 'c' }, webhooks: [hook({ rules: [{ operations: ['*'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }], namespaceSelector: { matchLabels: { env: 'prod' } } })] }]);
  assert.equal(await shouldCallHook(other!, attrs(pods, { namespace: 'gone' }), deps), undefined);
});

test('matchPolicy Equivalent: a rule naming another served version matches as that version; the served versions are looked up only for such a rule', async () => {
  const v1beta1: ResourceType = { ...deployments, version: 'v1beta1' };
  let lookups = 0;
  const deps = {
    namespaceLabels: async () => ({}),
    equivalents: (rt: ResourceType) => {
      lookups++;
      return rt === deployments ? [deployments, v1beta1] : [];
    },
  };
  const rule = { operations: ['CREATE' as const], apiGroups: ['apps'], apiVersions: ['v1beta1'], resources: ['deployments'] };
  const [equivalent, exact] = configuredWebhooks([{ metadata: { name: 'c' }, webhooks: [hook({ rules: [rule] }), hook({ rules: [rule], matchPolicy: 'Exact' })] }]);
  assert.equal((await shouldCallHook(equivalent!, attrs(deployments), deps))?.resource, v1beta1);
  assert.equal(await shouldCallHook(exact!, attrs(deployments), deps), undefined);
  assert.equal(lookups, 1);
  // Writes the rule does not name but for their version (another resource, another operation) look nothing up.
  assert.equal(await shouldCallHook(equivalent!, attrs(pods), deps), undefined);
  assert.equal(await shouldCallHook(equivalent!, attrs(deployments, { operation: 'UPDATE', oldObject: { metadata: { name: 'x' } } }), deps), undefined);
  assert.equal(lookups, 1);
});

test('a dry run reaching a webhook that may have side effects is refused before any call', async () => {
  const client = new WebhookClient({ endpoints: { service: async () => undefined, endpoints: async () => undefined, endpointSlices: () => [] } });
  const [w] = configuredWebhooks([{ metadata: { name: 'c' }, webhooks: [hook({ sideEffects: 'Some' })] }]);
  await assert.rejects(callAdmissionWebhook(client, w!.hook, attrs(pods, { dryRun: true }), { webhook: w!, resource: pods }, false), (e) => {
    assert.ok(isStatusError(e, 'BadRequest'));
    assert.equal(e.status.message, 'admission webhook "h.skiff.test" does not support dry run');
    return true;
  });
  client.close();
});

test('denials as upstream words them: never a success code, the reason when there is no message', () => {
  assert.equal(denial('w', { message: 'no', code: 200 }).status.code, 400);
  assert.equal(denial('w', { reason: 'Forbidden' as never }).status.message, 'admission webhook "w" denied the request: Forbidden');
  assert.equal(denial('w', undefined).status.message, 'admission webhook "w" denied the request without explanation');
  assert.equal(denial('w', { message: 'quota', code: 429 }).status.code, 429);
});

test('a write no webhook\'s rules match stays synchronous, with no namespace looked up and no webhook called', async () => {
  const lookups: string[] = [];
  const configurations = [{ metadata: { name: 'c' }, webhooks: [hook({ namespaceSelector: { matchLabels: { env: 'prod' } } })] }];
  const client = new WebhookClient({ endpoints: { service: async () => undefined, endpoints: async () => undefined, endpointSlices: () => [] } });
  const deps: AdmissionWebhookDeps = {
    configurations: new WebhookConfigurations({ changeCount: () => 1, list: () => configurations }),
    client,
    metrics: { observeWebhook: () => undefined, observeRejection: () => undefined, observeFailOpen: () => undefined },
    now: () => 0,
    namespaceLabels: async (n) => {
      lookups.push(n);
      return { env: 'test' };
    },
    equivalents: () => [],
  };
  for (const plugin of [validatingAdmissionWebhook(deps), mutatingAdmissionWebhook(deps)]) {
    const run = (a: AdmissionAttributes) => (plugin.validate ?? plugin.mutate)!(a);
    // The hook's rules name pod creates: a Deployment's, or a pod's update, never reach it.
    assert.equal(run(attrs(deployments)), undefined, plugin.name);
    assert.equal(run(attrs(pods, { operation: 'UPDATE', oldObject: { metadata: { name: 'x' } } })), undefined, plugin.name);
    assert.deepEqual(lookups, [], plugin.name);
    // A pod's create does: its namespace's labels are read, and the selector leaves the hook out.
    const matched = run(attrs(pods));
    assert.ok(matched instanceof Promise, plugin.name);
    await matched;
    assert.deepEqual(lookups.splice(0), ['ns'], plugin.name);
  }
  client.close();
});

test('both kinds of webhook count an outcome alike: an internal error with code 0, a call failure under Ignore as fail-open', async () => {
  const seen: string[] = [];
  const client = new WebhookClient({ endpoints: { service: async () => undefined, endpoints: async () => undefined, endpointSlices: () => [] } });
  const configurations = [
    { metadata: { name: 'a' }, webhooks: [hook({ name: 'side.skiff.test', sideEffects: 'Some', objectSelector: { matchLabels: { hook: 'side' } } })] },
    { metadata: { name: 'b' }, webhooks: [hook({ name: 'down.skiff.test', failurePolicy: 'Ignore', clientConfig: { service: { namespace: 'ns', name: 'gone' } }, objectSelector: { matchLabels: { hook: 'down' } } })] },
  ];
  const deps: AdmissionWebhookDeps = {
    configurations: new WebhookConfigurations({ changeCount: () => 1, list: () => configurations }),
    client,
    metrics: {
      observeWebhook: (name, type, op, rejected) => void seen.push(`${type} ${name} ${op} rejected=${rejected}`),
      observeRejection: (name, type, op, errorType, code) => void seen.push(`${type} ${name} ${op} ${errorType} ${code}`),
      observeFailOpen: (name, type) => void seen.push(`${type} ${name} fail-open`),
    },
    now: () => 0,
    namespaceLabels: async () => ({}),
    equivalents: () => [],
  };
  for (const [plugin, type] of [[validatingAdmissionWebhook(deps), 'validating'], [mutatingAdmissionWebhook(deps), 'admit']] as const) {
    const run = (a: AdmissionAttributes) => (plugin.validate ?? plugin.mutate)!(a);
    // A dry run reaching a webhook with side effects: refused before any call, an internal error to the metrics.
    await assert.rejects(Promise.resolve(run(attrs(pods, { dryRun: true, object: { metadata: { name: 'x', labels: { hook: 'side' } } } }))), (e) => isStatusError(e, 'BadRequest'));
    assert.deepEqual(seen.splice(0), [`${type} side.skiff.test CREATE apiserver_internal_error 0`, `${type} side.skiff.test CREATE rejected=true`]);
    // A webhook that cannot be reached, under Ignore: the write goes on.
    await run(attrs(pods, { object: { metadata: { name: 'x', labels: { hook: 'down' } } } }));
    assert.deepEqual(seen.splice(0), [`${type} down.skiff.test fail-open`, `${type} down.skiff.test CREATE rejected=false`]);
  }
  client.close();
});
