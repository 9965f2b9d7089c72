import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lines, make } from '../support/kind-checks.js';
import type { KubeObject } from '../../src/api/types.js';
import { networkPolicyResource } from '../../src/api/kinds/networkpolicy.js';
import { ingressResource } from '../../src/api/kinds/ingress.js';
import { ingressClassResource } from '../../src/api/kinds/ingressclass.js';

const NOW = Date.UTC(2026, 0, 10, 12, 0, 0);
const created = new Date(NOW - 5 * 60_000).toISOString();

test('network policy defaults: empty pod selector, TCP ports, policy types from the rules', () => {
  const np = make(networkPolicyResource, { metadata: { name: 'np', namespace: 'd' }, spec: { egress: [{ ports: [{ port: 53 }] }] } });
  assert.deepEqual(np.spec, { podSelector: {}, egress: [{ ports: [{ port: 53, protocol: 'TCP' }] }], policyTypes: ['Ingress', 'Egress'] });
  const ingressOnly = make(networkPolicyResource, { metadata: { name: 'np', namespace: 'd' }, spec: { podSelector: { matchLabels: { app: 'db' } } } });
  assert.deepEqual((ingressOnly.spec as Record<string, unknown>).policyTypes, ['Ingress']);
  assert.deepEqual(lines(networkPolicyResource.validate(np, undefined)), []);
});

test('network policy validation messages', () => {
  const np = make(networkPolicyResource, {
    metadata: { name: 'np', namespace: 'd' },
    spec: {
      ingress: [{ from: [{}, { ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24', '10.0.0.0/8'] }, podSelector: {} }], ports: [{ protocol: 'ICMP', port: 'http', endPort: 90 }] }],
      egress: [{ to: [{ ipBlock: { cidr: '10.0.0.300/8' } }], ports: [{ port: 80, endPort: 70 }, { endPort: 5 }] }],
      policyTypes: ['Ingress', 'Sideways'],
    },
  });
  assert.deepEqual(lines(networkPolicyResource.validate(np, undefined)), [
    'spec.ingress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
    'spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
    'spec.ingress[0].from[0]: Required value: must specify a peer',
    'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
    'spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: "10.0.0.0/8": must be a strict subset of `cidr`',
    'spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer',
    'spec.egress[0].ports[0].endPort: Invalid value: 70: must be greater than or equal to `port`',
    'spec.egress[0].ports[1].endPort: Invalid value: 5: may not be specified when `port` is not specified',
    'spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.300/8": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    'spec.policyTypes[1]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
  ]);
  const tooMany = make(networkPolicyResource, { metadata: { name: 'np', namespace: 'd' }, spec: { policyTypes: ['Ingress', 'Egress', 'Ingress'] } });
  assert.deepEqual(lines(networkPolicyResource.validate(tooMany, undefined)), [
    'spec.policyTypes: Invalid value: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
  ]);
});

test('network policy table prints the pod selector', () => {
  const cells = (spec: unknown) => networkPolicyResource.table.cells({ metadata: { name: 'np', creationTimestamp: created }, spec }, NOW);
  assert.deepEqual(cells({ podSelector: {} }), ['np', '<none>', '5m']);
  assert.deepEqual(cells({ podSelector: { matchLabels: { app: 'db', tier: 'x' } } }), ['np', 'app=db,tier=x', '5m']);
});

const backend = { service: { name: 'web', port: { number: 80 } } };

test('ingress validation messages', () => {
  const ing = make(ingressResource, {
    metadata: { name: 'i', namespace: 'd', annotations: { 'kubernetes.io/ingress.class': 'nginx' } },
    spec: {
      ingressClassName: 'other',
      rules: [
        { host: '10.0.0.1', http: { paths: [{ path: '/a', backend }] } },
        { host: '*.Example.com', http: { paths: [{ path: 'rel', pathType: 'Prefix', backend: { service: { name: 'Web', port: {} } } }] } },
        { host: 'ok.example.com', http: { paths: [{ path: '/x/..', pathType: 'Exact', backend: { service: { name: 'web', port: { name: 'http', number: 80 } }, resource: { kind: 'K', name: 'n' } } }] } },
        { http: { paths: [{ pathType: 'Regex', backend: {} }] } },
      ],
      tls: [{ hosts: ['a_b'], secretName: 'Bad' }],
    },
  });
  assert.deepEqual(lines(ingressResource.validate(ing, undefined)), [
    'spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
    'spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
    `spec.rules[1].host: Invalid value: "*.Example.com": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    'spec.rules[1].http.paths[0].path: Invalid value: "rel": must be an absolute path',
    `spec.rules[1].http.paths[0].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    'spec.rules[1].http.paths[0].backend: Required value: port name or number is required',
    `spec.rules[2].http.paths[0].path: Invalid value: "/x/..": cannot end with '/..'`,
    'spec.rules[2].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends',
    'spec.rules[3].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
    'spec.rules[3].http.paths[0].backend: Invalid value: "": resource or service backend is required',
    `spec.tls[0].hosts[0]: Invalid value: "a_b": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    `spec.tls[0].secretName: Invalid value: "Bad": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    'annotations.kubernetes.io/ingress.class: Invalid value: "nginx": must match `ingressClassName` when both are specified',
  ]);
  const empty = make(ingressResource, { metadata: { name: 'i', namespace: 'd' }, spec: {} });
  assert.deepEqual(lines(ingressResource.validate(empty, undefined)), ['spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified']);
});

test('ingress table: class, hosts, address, ports', () => {
  const ing: KubeObject = {
    metadata: { name: 'web', creationTimestamp: created },
    spec: { ingressClassName: 'nginx', rules: [{ host: 'a.com' }, {}, { host: 'b.com' }, { host: 'c.com' }, { host: 'd.com' }], tls: [{ hosts: ['a.com'] }] },
    status: { loadBalancer: { ingress: [{ ip: '10.0.0.12' }, { hostname: 'lb.example.com' }, { ip: '10.0.0.2' }] } },
  };
  assert.deepEqual(ingressResource.table.cells(ing, NOW), ['web', 'nginx', 'a.com,b.com,c.com + 2 more...', '10.0.0.12,10....', '80, 443', '5m']);
  assert.deepEqual(ingressResource.table.cells({ metadata: { name: 'bare' }, spec: { defaultBackend: backend } }, NOW), ['bare', '<none>', '*', '', '80', '<unknown>']);
});

test('ingress class: scope defaults to Cluster, controller is a domain-prefixed path and immutable', () => {
  const ic = make(ingressClassResource, { metadata: { name: 'nginx' }, spec: { controller: 'k8s.io/ingress-nginx', parameters: { apiGroup: 'k8s.example.com', kind: 'IngressParameters', name: 'p' } } });
  assert.equal((ic.spec as any).parameters.scope, 'Cluster');
  assert.deepEqual(lines(ingressClassResource.validate(ic, undefined)), []);
  assert.deepEqual(ingressClassResource.table.cells(ic, NOW), ['nginx', 'k8s.io/ingress-nginx', 'IngressParameters.k8s.example.com/p', '<unknown>']);
  const bad = make(ingressClassResource, { metadata: { name: 'x' }, spec: { controller: 'nginx', parameters: { kind: 'K', name: 'n', scope: 'Namespace' } } });
  assert.deepEqual(lines(ingressClassResource.validate(bad, undefined)), [
    'spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
    "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
  ]);
  const changed = structuredClone(ic);
  (changed.spec as any).controller = 'example.com/other';
  assert.deepEqual(lines(ingressClassResource.validate(changed, ic)), ['spec.controller: Invalid value: "example.com/other": field is immutable']);
});
