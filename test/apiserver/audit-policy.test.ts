import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PolicyChecker, parsePolicy, type Level } from '../../src/apiserver/audit/policy.js';
import { parseRequestInfo } from '../../src/apiserver/http/request-info.js';
import type { UserInfo } from '../../src/apiserver/request-context.js';

const namespaced = (_g: string, _v: string, r: string): boolean => r !== 'namespaces' && r !== 'nodes';

// Rules in the order upstream's docs example uses them: the first match decides.
const POLICY = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
    verbs: ["watch"]
    resources:
      - group: ""
        resources: ["endpoints", "services"]
  - level: None
    userGroups: ["system:authenticated"]
    nonResourceURLs: ["/api*", "/version"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["pods/log", "pods/status"]
  - level: Request
    resources:
      - group: ""
        resources: ["configmaps"]
        resourceNames: ["controller-leader"]
  - level: Metadata
    resources:
      - group: apps
        resources: ["*/scale"]
  - level: Request
    resources:
      - group: apps
        resources: ["deployments/*"]
  - level: RequestResponse
    namespaces: [""]
    resources:
      - group: ""
  - level: None
    namespaces: ["kube-system"]
  - level: Request
    omitStages: [ResponseStarted]
    verbs: ["create", "delete"]
  - level: Metadata
`;

const admin: UserInfo = { name: 'admin', groups: ['system:masters', 'system:authenticated'] };
const proxy: UserInfo = { name: 'system:kube-proxy', groups: ['system:authenticated'] };

const CASES: [string, UserInfo | undefined, string, string, Level][] = [
  // what, user, method, path (with query), expected level
  ['kube-proxy watching endpoints', proxy, 'GET', '/api/v1/namespaces/default/endpoints?watch=true', 'None'],
  ['kube-proxy listing endpoints: not a watch', proxy, 'GET', '/api/v1/namespaces/default/endpoints', 'Metadata'],
  ['admin watching endpoints', admin, 'GET', '/api/v1/namespaces/default/endpoints?watch=1', 'Metadata'],
  ['non-resource /api prefix', admin, 'GET', '/apis', 'None'],
  ['non-resource /version exact', admin, 'GET', '/version', 'None'],
  ['non-resource: no user, no group match', undefined, 'GET', '/version', 'Metadata'],
  ['non-resource /healthz not listed', admin, 'GET', '/healthz', 'Metadata'],
  ['pods/log subresource', admin, 'GET', '/api/v1/namespaces/default/pods/web/log', 'RequestResponse'],
  ['pods themselves are not pods/log', admin, 'GET', '/api/v1/namespaces/default/pods/web', 'Metadata'],
  ['resourceNames: the named configmap', admin, 'PUT', '/api/v1/namespaces/kube-system/configmaps/controller-leader', 'Request'],
  ['resourceNames: another configmap in kube-system', admin, 'PUT', '/api/v1/namespaces/kube-system/configmaps/other', 'None'],
  ['*/scale in apps', admin, 'PUT', '/apis/apps/v1/namespaces/default/deployments/web/scale', 'Metadata'],
  ['*/scale is for apps only', admin, 'PUT', '/apis/autoscaling/v1/namespaces/default/foos/web/scale', 'Metadata'],
  ['deployments/* any subresource', admin, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/web/status', 'Request'],
  // Upstream's checker compares the resource alone for "deployments/*", beyond what its docs say.
  ['deployments/* matches deployments too', admin, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/web', 'Request'],
  ['cluster-scoped core: namespace ""', admin, 'DELETE', '/api/v1/nodes/n1', 'RequestResponse'],
  ['a Namespace is in itself, not in ""', admin, 'DELETE', '/api/v1/namespaces/team-a', 'Request'],
  ['anything else in kube-system', admin, 'POST', '/api/v1/namespaces/kube-system/configmaps', 'None'],
  ['verbs: create elsewhere', admin, 'POST', '/api/v1/namespaces/default/configmaps', 'Request'],
  ['deletecollection is not delete', admin, 'DELETE', '/api/v1/namespaces/default/configmaps', 'Metadata'],
  ['catch-all', admin, 'GET', '/apis/batch/v1/jobs', 'Metadata'],
];

test('policy matching: the first rule that matches decides, as upstream checks each field', () => {
  const checker = new PolicyChecker(parsePolicy(POLICY));
  for (const [what, user, method, uri, want] of CASES) {
    const url = new URL(uri, 'https://x');
    const info = parseRequestInfo(method, url.pathname, url.searchParams, namespaced);
    assert.equal(checker.decide({ user, info }).level, want, what);
  }
});

test('omitStages: the policy-wide stages are joined with each rule\'s; no match is None with the policy\'s', () => {
  const checker = new PolicyChecker(parsePolicy(POLICY));
  const create = checker.decide({ user: admin, info: parseRequestInfo('POST', '/api/v1/namespaces/default/configmaps', new URLSearchParams(), namespaced) });
  assert.deepEqual([...create.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  const none = new PolicyChecker(parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Panic]\nrules: [{level: Metadata, users: [x]}]'));
  const d = none.decide({ user: admin, info: parseRequestInfo('GET', '/api', new URLSearchParams(), namespaced) });
  assert.equal(d.level, 'None');
  assert.deepEqual([...d.omitStages], ['Panic']);
});

test('omitManagedFields: a rule\'s value wins over the policy\'s', () => {
  const p = parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitManagedFields: true\nrules:\n- {level: Request, verbs: [create], omitManagedFields: false}\n- {level: Request}');
  const c = new PolicyChecker(p);
  const info = (m: string) => parseRequestInfo(m, '/api/v1/namespaces/default/pods', new URLSearchParams(), namespaced);
  assert.equal(c.decide({ user: admin, info: info('POST') }).omitManagedFields, false);
  assert.equal(c.decide({ user: admin, info: info('GET') }).omitManagedFields, true);
});

test('policy validation: one clear line for each of upstream\'s refusals', () => {
  const bad: [string, RegExp][] = [
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []', /0 rules/],
    ['apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]', /apiVersion: "audit.k8s.io\/v1beta1" is not supported any more; use "audit.k8s.io\/v1"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Pod\nrules: [{level: None}]', /kind: expected "Policy"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Verbose}]', /rules\[0\]\.level: Unsupported value: "Verbose": supported values: "None", "Metadata", "Request", "RequestResponse"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{verbs: [get]}]', /rules\[0\]\.level: Required value/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None}, {level: None, nonResourceURLs: [healthz]}]', /rules\[1\]\.nonResourceURLs\[0\].*must begin with a '\/'/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/a*b"]}]', /wildcards '\*' must be the final character/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/a"], namespaces: [x]}]', /cannot apply to both regular resources and non-resource URLs/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: apps/v1}]}]', /rules\[0\]\.resources\[0\]\.group: Invalid value: "apps\/v1"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resourceNames: [a]}]}]', /using resourceNames requires at least one resource/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, omitStages: [Done]}]', /rules\[0\]\.omitStages\[0\]: Invalid value: "Done": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Later]\nrules: [{level: None}]', /: omitStages\[0\]: Invalid value: "Later"/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, verb: [get]}]', /rules\[0\]\.verb: unknown field/],
    ['apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, users: admin}]', /rules\[0\]\.users: expected a list of strings/],
    ['rules: [', /not valid YAML/],
  ];
  for (const [text, want] of bad) assert.throws(() => parsePolicy(text), want, text);
});
