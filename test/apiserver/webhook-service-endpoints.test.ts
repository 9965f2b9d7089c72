// A webhook's Service reference resolves as an APIService's does (one resolver, ../service-resolver.ts):
// the same endpoint for the same Service, EndpointSlices before Endpoints, ready addresses only, with
// the failures worded as upstream's webhook client words them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Service } from '../../src/api/kinds/service.js';
import type { Endpoints } from '../../src/api/kinds/endpoints.js';
import type { EndpointSlice } from '../../src/api/kinds/endpointslice.js';
import { resolveServiceEndpoint, type ServiceEndpointObjects } from '../../src/apiserver/webhook/service-endpoints.js';

const objects = (svc?: Service, eps?: Endpoints, slices: EndpointSlice[] = []): ServiceEndpointObjects => ({
  service: async () => svc,
  endpoints: async () => eps,
  endpointSlices: () => slices,
});

test('a webhook Service resolves to a ready endpoint of its port, slices first, failures in upstream words', async () => {
  const resolve = (o: ServiceEndpointObjects, port = 443) => resolveServiceEndpoint(o, 'hooks', 'webhook', port);
  const failsWith = (p: Promise<unknown>, message: string) => assert.rejects(p, (e: Error) => (assert.equal(e.message, message), true));
  await failsWith(resolve(objects()), 'service "webhook" not found');
  const svc: Service = { metadata: { name: 'webhook', namespace: 'hooks' }, spec: { ports: [{ name: 'https', port: 443, targetPort: 8443 }] } };
  await failsWith(resolve(objects(svc), 444), 'no service port 444 found for service "webhook"');
  await failsWith(resolve(objects(svc)), 'no endpoints available for service "webhook"');
  const eps: Endpoints = { metadata: { name: 'webhook', namespace: 'hooks' }, subsets: [{ addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [{ name: 'https', port: 8443 }] }] };
  assert.deepEqual(await resolve(objects(svc, eps)), { host: '10.0.0.1', port: 8443 });
  // With slices, the webhook goes where the aggregation layer would: a ready endpoint of the slices.
  const slice: EndpointSlice = { metadata: { name: 'webhook-x', namespace: 'hooks' }, ports: [{ name: 'https', port: 9443 }], endpoints: [{ addresses: ['10.0.0.3'] }, { addresses: ['10.0.0.4'], conditions: { ready: false } }] };
  for (let i = 0; i < 20; i++) assert.deepEqual(await resolve(objects(svc, eps, [slice])), { host: '10.0.0.3', port: 9443 });
  await failsWith(resolve(objects(svc, undefined, [{ ...slice, endpoints: [{ addresses: ['10.0.0.4'], conditions: { ready: false } }] }])), 'no endpoints available for service "webhook"');
});
