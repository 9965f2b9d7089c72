import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/api/kinds/pod.js';
import type { KubeObject } from '../../src/api/types.js';
import { namespaceRows, serviceRow, slimService, type SlimEndpointSlice, type SlimService } from '../../src/dashboard/namespace-rows.js';

const pod = (ns: string, phase: string, deleting = false): Pod =>
  ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `p-${Math.random()}`, namespace: ns, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, status: { phase } }) as Pod;

const namespace = (name: string, phase = 'Active', deleting = false): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) }, status: { phase } }) as KubeObject;

const service = (name: string, spec: SlimService['spec'], status?: SlimService['status']): SlimService =>
  slimService({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop', annotations: { big: 'x' } }, spec, ...(status ? { status } : {}) });

const slice = (svc: string, ready: boolean[]): SlimEndpointSlice =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: `${svc}-abc`, namespace: 'shop', labels: { 'kubernetes.io/service-name': svc, other: 'x' } },
    endpoints: ready.map((r) => ({ addresses: ['10.0.0.1'], conditions: { ready: r } })),
  }) as SlimEndpointSlice;

describe('dashboard namespaces and Services', () => {
  it('lists every namespace with its phase and its pods by phase', () => {
    const rows = namespaceRows(
      [namespace('shop'), namespace('old', 'Terminating', true), namespace('default')],
      [pod('shop', 'Running'), pod('shop', 'Running'), pod('shop', 'Pending'), pod('shop', 'Running', true), pod('hidden', 'Failed')],
      [service('web', {}), service('db', {})],
    );
    assert.deepEqual(
      rows.map((r) => [r.name, r.phase, r.pods.running, r.pods.pending, r.pods.terminating, r.pods.failed, r.services]),
      [
        ['default', 'Active', 0, 0, 0, 0, 0],
        ['hidden', '', 0, 0, 0, 1, 0],
        ['old', 'Terminating', 0, 0, 0, 0, 0],
        ['shop', 'Active', 2, 1, 1, 0, 2],
      ],
    );
  });

  it('says of a Service what answers behind it', () => {
    const web = service('web', { type: 'NodePort', clusterIP: '10.96.0.10', selector: { app: 'web' }, ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 443 }] });
    assert.deepEqual(serviceRow(web, [slice('web', [true, false]), slice('db', [true])]), {
      namespace: 'shop',
      name: 'web',
      type: 'NodePort',
      clusterIP: '10.96.0.10',
      ports: '80:30080/TCP,443/TCP',
      ready: 1,
      state: '1 of 2 endpoints ready',
    });
    assert.equal(serviceRow(web, []).state, 'no ready endpoints');
    assert.equal(serviceRow(service('manual', { clusterIP: '10.96.0.11', ports: [{ port: 5432 }] }), []).state, 'no selector');
    assert.equal(serviceRow(service('lb', { type: 'LoadBalancer', selector: { app: 'web' } }), [slice('lb', [true])]).state, 'external address pending');
    assert.equal(serviceRow(service('lb', { type: 'LoadBalancer', selector: { app: 'web' } }, { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } }), [slice('lb', [true])]).state, '1 of 1 endpoint ready');
    assert.equal(serviceRow(service('alias', { type: 'ExternalName', externalName: 'db.example.com' }), []).state, 'alias of db.example.com');
    assert.equal(serviceRow(web, undefined).state, 'endpoints not shown: this user may not list endpointslices');
    assert.equal(web.metadata.annotations, undefined, 'kept slim');
  });
});
