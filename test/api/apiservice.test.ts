// APIService validation as kube-aggregator's, and the service resolution the aggregation layer and
// its availability controller share.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/api/types.js';
import { apiServiceResource } from '../../src/api/kinds/apiservice.js';
import { resolveService, type ServiceObjects } from '../../src/apiserver/service-resolver.js';
import type { Service } from '../../src/api/kinds/service.js';
import type { Endpoints } from '../../src/api/kinds/endpoints.js';
import type { EndpointSlice } from '../../src/api/kinds/endpointslice.js';

function errors(o: KubeObject): string[] {
  apiServiceResource.defaults(o);
  return apiServiceResource.validate(o, undefined).map((c) => `${c.field}: ${c.message}`);
}

const remote = (spec: Record<string, unknown>, name = 'v1beta1.metrics.k8s.io'): KubeObject => ({
  metadata: { name },
  spec: { group: 'metrics.k8s.io', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, service: { namespace: 'kube-system', name: 'metrics-server' }, ...spec },
});

test('a valid APIService has its service port defaulted to 443', () => {
  const o = remote({ insecureSkipTLSVerify: true });
  assert.deepEqual(errors(o), []);
  assert.equal((o.spec as { service: { port: number } }).service.port, 443);
});

test("APIService validation: upstream's rules and messages", () => {
  assert.deepEqual(errors(remote({}, 'v1.metrics.k8s.io')), ['metadata.name: Invalid value: "v1.metrics.k8s.io": must be `spec.version+"."+spec.group`: "v1beta1.metrics.k8s.io"']);
  assert.deepEqual(errors(remote({ group: '', version: 'v2' }, 'v2.')), ['spec.group: Required value: only v1 may have an empty group and it better be legacy kube']);
  assert.deepEqual(errors(remote({ groupPriorityMinimum: 0, versionPriority: 1001 })), [
    'spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000',
    'spec.versionPriority: Invalid value: 1001: must be positive and less than 1000',
  ]);
  assert.deepEqual(errors(remote({ insecureSkipTLSVerify: true, caBundle: Buffer.from('pem').toString('base64') })), ['spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present']);
  assert.deepEqual(errors(remote({ service: { namespace: '', name: '' } })), ['spec.service.namespace: Required value', 'spec.service.name: Required value']);
  assert.deepEqual(errors(remote({ service: undefined, caBundle: Buffer.from('pem').toString('base64') })), ['spec.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle']);
});

test('local APIServices are created Available', () => {
  const o: KubeObject = { metadata: { name: 'v1.example.com' }, spec: { group: 'example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 } };
  apiServiceResource.prepareForCreate!(o);
  const c = (o.status as { conditions: { type: string; status: string; reason: string }[] }).conditions[0]!;
  assert.deepEqual([c.type, c.status, c.reason], ['Available', 'True', 'Local']);
  assert.deepEqual(apiServiceResource.table.cells(o, Date.now()).slice(0, 3), ['v1.example.com', 'Local', 'True']);
});

function objects(svc?: Service, eps?: Endpoints, slices: EndpointSlice[] = []): ServiceObjects {
  return { service: () => svc, endpoints: () => eps, endpointSlices: () => slices };
}

test('resolving a Service: its port by number, the endpoint port by name, ready addresses only', () => {
  const ref = { namespace: 'ns', name: 'api', port: 443 };
  assert.deepEqual(resolveService(ref, objects()), { ok: false, reason: 'ServiceNotFound', message: 'service/api in "ns" is not present' });
  const svc: Service = { metadata: { name: 'api', namespace: 'ns' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } };
  assert.equal((resolveService({ ...ref, port: 444 }, objects(svc)) as { reason: string }).reason, 'ServicePortError');
  assert.equal((resolveService(ref, objects(svc)) as { message: string }).message, 'cannot find endpoints for service/api in "ns"');
  const eps: Endpoints = { metadata: { name: 'api', namespace: 'ns' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [{ name: 'https', port: 8443 }] }] };
  assert.deepEqual(resolveService(ref, objects(svc, eps)), { ok: true, endpoints: [{ host: '10.0.0.1', port: 8443 }] });
  const slice: EndpointSlice = { metadata: { name: 'api-x', namespace: 'ns' }, ports: [{ name: 'https', port: 9443 }], endpoints: [{ addresses: ['10.0.0.3'] }, { addresses: ['10.0.0.4'], conditions: { ready: false } }] };
  assert.deepEqual(resolveService(ref, objects(svc, eps, [slice])), { ok: true, endpoints: [{ host: '10.0.0.3', port: 9443 }] });
  assert.deepEqual(resolveService(ref, objects(svc, { ...eps, subsets: [] })), { ok: false, reason: 'MissingEndpoints', message: 'endpoints for service/api in "ns" have no addresses with port name "https"' });
});
