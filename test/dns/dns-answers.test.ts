// Cluster DNS answers as CoreDNS's kubernetes plugin gives them, from an in-memory index.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Answer } from 'dns-packet';
import { ClusterDnsIndex } from '../../src/dns/cluster-index.js';
import { resolve, type Resolution } from '../../src/dns/answer.js';
import type { Service } from '../../src/api/kinds/service.js';
import type { EndpointSlice } from '../../src/api/kinds/endpointslice.js';

const S = { zone: 'cluster.local', ttl: 5, dnsIp: '10.43.0.10' };

function svc(name: string, spec: Service['spec'], namespace = 'default'): Service {
  return { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace }, spec };
}

function slice(service: string, endpoints: EndpointSlice['endpoints'], ports: EndpointSlice['ports'] = [], name = `${service}-abc`): EndpointSlice {
  return { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': service } }, addressType: 'IPv4', endpoints, ports };
}

function cluster(): ClusterDnsIndex {
  const ix = new ClusterDnsIndex();
  ix.setNamespace('default', true);
  ix.setNamespace('kube-system', true);
  ix.setService(svc('web', { clusterIP: '10.43.0.20', clusterIPs: ['10.43.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }));
  ix.setService(svc('db', { clusterIP: 'None', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }] }));
  ix.setSlice(slice('db', [
    { addresses: ['10.42.0.5'], hostname: 'db-0', conditions: { ready: true } },
    { addresses: ['10.42.0.6'], hostname: 'db-1', conditions: { ready: true } },
    { addresses: ['10.42.0.7'], hostname: 'db-2', conditions: { ready: false } },
  ], [{ name: 'pg', port: 5432, protocol: 'TCP' }]));
  ix.setService(svc('empty', { clusterIP: 'None', ports: [{ name: 'x', port: 1, protocol: 'TCP' }] }));
  ix.setService(svc('ext', { type: 'ExternalName', externalName: 'example.org' }));
  ix.setService(svc('extip', { type: 'ExternalName', externalName: '192.0.2.1' }));
  ix.markSynced();
  return ix;
}

function answer(r: Resolution): Extract<Resolution, { kind: 'answer' }> {
  assert.equal(r.kind, 'answer');
  return r as Extract<Resolution, { kind: 'answer' }>;
}

const data = (as: Answer[]) => as.map((a) => ('data' in a ? a.data : undefined));

describe('cluster DNS answers', () => {
  const ix = cluster();
  const q = (name: string, type: 'A' | 'AAAA' | 'SRV' | 'CNAME' | 'TXT' | 'MX' | 'SOA' | 'NS' | 'PTR' = 'A') => resolve({ name, type, class: 'IN' }, ix, S);

  it('a ClusterIP Service: A is its cluster IP, AAAA is NODATA (the name exists)', () => {
    const a = answer(q('web.default.svc.cluster.local'));
    assert.equal(a.rcode, 'NOERROR');
    assert.deepEqual(data(a.answers), ['10.43.0.20'], 'one A record though the Service has two ports');
    assert.equal(a.answers[0]!.type === 'A' && a.answers[0]!.ttl, 5);
    const aaaa = answer(q('web.default.svc.cluster.local', 'AAAA'));
    assert.equal(aaaa.rcode, 'NOERROR');
    assert.deepEqual(aaaa.answers, []);
    assert.equal(aaaa.authorities[0]?.type, 'SOA', 'NODATA carries the zone SOA');
    assert.equal(answer(q('WEB.Default.SVC.cluster.local.')).answers.length, 1, 'names are case-insensitive');
  });

  it('NXDOMAIN for a missing Service, a missing namespace, a name that is neither svc nor pod, and one too long', () => {
    for (const name of ['nope.default.svc.cluster.local', 'web.nons.svc.cluster.local', 'nons.svc.cluster.local', 'foo.cluster.local', 'a.b.c.web.default.svc.cluster.local']) {
      const r = answer(q(name));
      assert.equal(r.rcode, 'NXDOMAIN', name);
      assert.equal(r.authorities[0]?.type, 'SOA');
    }
  });

  it('NODATA for names that exist without records: the zone, svc, pod, a namespace', () => {
    for (const name of ['cluster.local', 'svc.cluster.local', 'pod.cluster.local', 'default.svc.cluster.local', 'default.pod.cluster.local']) {
      const r = answer(q(name));
      assert.equal(r.rcode, 'NOERROR', name);
      assert.deepEqual(r.answers, [], name);
    }
    // Another type at an existing Service: NODATA; at a missing one: NXDOMAIN.
    assert.equal(answer(q('web.default.svc.cluster.local', 'MX')).rcode, 'NOERROR');
    assert.equal(answer(q('nope.default.svc.cluster.local', 'MX')).rcode, 'NXDOMAIN');
  });

  it('a headless Service: one A per ready endpoint; none ready is NXDOMAIN', () => {
    assert.deepEqual(data(answer(q('db.default.svc.cluster.local')).answers).sort(), ['10.42.0.5', '10.42.0.6']);
    assert.equal(answer(q('empty.default.svc.cluster.local')).rcode, 'NXDOMAIN');
  });

  it('a StatefulSet pod by hostname, and an endpoint by its dashed address', () => {
    assert.deepEqual(data(answer(q('db-1.db.default.svc.cluster.local')).answers), ['10.42.0.6']);
    assert.deepEqual(data(answer(q('10-42-0-5.db.default.svc.cluster.local')).answers), [], 'an endpoint with a hostname is named by it only');
    assert.equal(answer(q('db-2.db.default.svc.cluster.local')).rcode, 'NXDOMAIN', 'not ready');
    assert.equal(answer(q('db-9.db.default.svc.cluster.local')).rcode, 'NXDOMAIN');
  });

  it('SRV for a named port: the Service name (ClusterIP) or each endpoint (headless) as target, with glue', () => {
    const r = answer(q('_http._tcp.web.default.svc.cluster.local', 'SRV'));
    assert.deepEqual(data(r.answers), [{ priority: 0, weight: 100, port: 80, target: 'web.default.svc.cluster.local' }]);
    assert.deepEqual(r.additionals.map((a) => [a.type, a.name, 'data' in a ? a.data : '']), [['A', 'web.default.svc.cluster.local', '10.43.0.20']]);
    const udp = answer(q('_dns._udp.web.default.svc.cluster.local', 'SRV'));
    assert.equal((data(udp.answers)[0] as { port: number }).port, 53);
    assert.equal(answer(q('_http._udp.web.default.svc.cluster.local', 'SRV')).rcode, 'NXDOMAIN', 'wrong protocol');
    const h = answer(q('_pg._tcp.db.default.svc.cluster.local', 'SRV'));
    assert.deepEqual(data(h.answers).map((d) => (d as { target: string }).target).sort(), ['db-0.db.default.svc.cluster.local', 'db-1.db.default.svc.cluster.local']);
    assert.equal((data(h.answers)[0] as { weight: number }).weight, 50, 'equal weights sharing 100');
    // The plain name's SRV lists every port.
    assert.equal(answer(q('web.default.svc.cluster.local', 'SRV')).answers.length, 2);
    // A for an SRV-shaped name: the Service's address.
    assert.deepEqual(data(answer(q('_http._tcp.web.default.svc.cluster.local')).answers), ['10.43.0.20']);
  });

  it('ExternalName: a CNAME, whose target is looked up next; an address as external name is NXDOMAIN', () => {
    const r = answer(q('ext.default.svc.cluster.local'));
    assert.deepEqual(r.answers.map((a) => [a.type, 'data' in a ? a.data : '']), [['CNAME', 'example.org']]);
    assert.deepEqual(r.chase, { name: 'example.org', type: 'A' });
    assert.deepEqual(data(answer(q('ext.default.svc.cluster.local', 'CNAME')).answers), ['example.org']);
    assert.equal(answer(q('extip.default.svc.cluster.local')).rcode, 'NXDOMAIN');
  });

  it('pods insecure: a dashed address in an existing namespace is that address', () => {
    assert.deepEqual(data(answer(q('10-42-0-9.default.pod.cluster.local')).answers), ['10.42.0.9']);
    assert.equal(answer(q('10-42-0-9.nons.pod.cluster.local')).rcode, 'NXDOMAIN');
    assert.equal(answer(q('not-an-ip.default.pod.cluster.local')).rcode, 'NXDOMAIN');
  });

  it('the zone SOA and NS, and the DNS schema version', () => {
    assert.equal(answer(q('cluster.local', 'SOA')).answers[0]!.type, 'SOA');
    const ns = answer(q('cluster.local', 'NS'));
    assert.deepEqual(data(ns.answers), ['ns.dns.cluster.local']);
    assert.deepEqual(data(ns.additionals), ['10.43.0.10']);
    assert.deepEqual(data(answer(q('dns-version.cluster.local', 'TXT')).answers), ['1.1.0']);
  });

  it('names outside the zone are forwarded; reverse names of cluster addresses are answered, others forwarded', () => {
    assert.equal(q('example.org').kind, 'forward');
    assert.equal(q('cluster.local.example.org').kind, 'forward');
    assert.deepEqual(data(answer(q('20.0.43.10.in-addr.arpa', 'PTR')).answers), ['web.default.svc.cluster.local']);
    assert.deepEqual(data(answer(q('6.0.42.10.in-addr.arpa', 'PTR')).answers), ['db-1.db.default.svc.cluster.local']);
    assert.equal(q('1.2.0.192.in-addr.arpa', 'PTR').kind, 'forward');
  });

  it('changes show at once: a new Service resolves, a deleted one is NXDOMAIN, a slice moves', () => {
    const live = cluster();
    const look = (name: string) => answer(resolve({ name, type: 'A', class: 'IN' }, live, S));
    assert.equal(look('new.default.svc.cluster.local').rcode, 'NXDOMAIN');
    live.setService(svc('new', { clusterIP: '10.43.0.30', ports: [{ port: 80 }] }));
    assert.deepEqual(data(look('new.default.svc.cluster.local').answers), ['10.43.0.30']);
    live.setService(svc('new', {}), false);
    assert.equal(look('new.default.svc.cluster.local').rcode, 'NXDOMAIN');
    live.setSlice(slice('db', [], [], 'db-abc'), false);
    assert.equal(look('db.default.svc.cluster.local').rcode, 'NXDOMAIN');
  });

  it('before the first full list, a name not found is SERVFAIL, not NXDOMAIN', () => {
    const fresh = new ClusterDnsIndex();
    assert.equal(answer(resolve({ name: 'web.default.svc.cluster.local', type: 'A', class: 'IN' }, fresh, S)).rcode, 'SERVFAIL');
  });
});

describe('the view behind the answers', () => {
  it('changes its serial (and so empties the answer caches) only when an answer could change', () => {
    const ix = cluster();
    const at = ix.serial;
    // A status write, a label edit, a not-ready endpoint's zone: nothing an answer reads.
    ix.setService({ ...svc('web', { clusterIP: '10.43.0.20', clusterIPs: ['10.43.0.20'], ports: [{ name: 'http', port: 80, protocol: 'TCP' }, { name: 'dns', port: 53, protocol: 'UDP' }] }), status: { loadBalancer: {} } });
    ix.setSlice(slice('db', [
      { addresses: ['10.42.0.5'], hostname: 'db-0', conditions: { ready: true } },
      { addresses: ['10.42.0.6'], hostname: 'db-1', conditions: { ready: true } },
      { addresses: ['10.42.0.7'], hostname: 'db-2', conditions: { ready: false }, zone: 'b' },
    ], [{ name: 'pg', port: 5432, protocol: 'TCP' }]));
    ix.setNamespace('default', true);
    ix.setService(svc('gone', { clusterIP: '10.43.0.99' }), false);
    assert.equal(ix.serial, at);
    ix.setSlice(slice('db', [{ addresses: ['10.42.0.5'], hostname: 'db-0', conditions: { ready: true } }], [{ name: 'pg', port: 5432, protocol: 'TCP' }]));
    assert.equal(ix.serial, at + 1, 'an endpoint gone');
    assert.deepEqual(data(answer(resolve({ name: 'db.default.svc.cluster.local', type: 'A', class: 'IN' }, ix, S)).answers), ['10.42.0.5']);
    ix.setService(svc('web', { clusterIP: '10.43.0.21', clusterIPs: ['10.43.0.21'] }));
    ix.setNamespace('team-a', true);
    ix.setSlice(slice('db', [], [], 'db-abc'), false);
    assert.equal(ix.serial, at + 4);
  });
});
