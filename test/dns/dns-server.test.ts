// The cluster DNS server on loopback: UDP and TCP, truncation with TC for big UDP answers, the
// ExternalName target chased, other names forwarded to an upstream of the test's own, clients the
// node does not serve refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { DecodedPacket, Packet } from 'dns-packet';
import { ClusterDnsIndex } from '../../src/dns/cluster-index.js';
import { ClusterDnsServer } from '../../src/dns/dns-server.js';
import { systemClock } from '../../src/util/clock.js';
import { createLogger } from '../../src/util/log.js';

function udpAsk(port: number, p: Packet): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const s = dgram.createSocket('udp4');
    const t = setTimeout(() => (s.close(), reject(new Error('no UDP answer'))), 3000);
    s.on('message', (m) => (clearTimeout(t), s.close(), resolve(dnsPacket.decode(m))));
    s.send(dnsPacket.encode(p), port, '127.0.0.1');
  });
}

function tcpAsk(port: number, p: Packet): Promise<DecodedPacket> {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => s.write(dnsPacket.streamEncode(p)));
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        s.destroy();
        resolve(dnsPacket.decode(buf.subarray(2)));
      }
    });
    s.on('error', reject);
  });
}

/** The reply's RCODE by name (the typings leave out the field dns-packet decodes). */
const rcode = (p: DecodedPacket) => ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'][(p.flags ?? 0) & 15];

const query = (name: string, type: 'A' | 'SRV' = 'A'): Packet => ({ type: 'query', id: 4242, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }] });

describe('cluster DNS server', () => {
  const index = new ClusterDnsIndex();
  let upstream: dgram.Socket;
  let upstreamPort = 0;
  let port = 0;
  let allow = true;
  const server = new ClusterDnsServer({
    index,
    settings: () => ({ zone: 'cluster.local', ttl: 5 }),
    upstreams: () => [{ host: '127.0.0.1', port: upstreamPort }],
    clock: systemClock,
    log: createLogger('dns-test', 'json', 'silent'),
    allowed: () => allow,
  });

  before(async () => {
    index.setNamespace('default', true);
    index.setService({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'big', namespace: 'default' }, spec: { clusterIP: 'None', ports: [{ name: 'http', port: 80 }] } });
    index.setSlice({
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'big-1', namespace: 'default', labels: { 'kubernetes.io/service-name': 'big' } }, addressType: 'IPv4',
      endpoints: Array.from({ length: 60 }, (_, i) => ({ addresses: [`10.42.1.${i + 1}`], conditions: { ready: true } })),
      ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    });
    index.setService({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'ext', namespace: 'default' }, spec: { type: 'ExternalName', externalName: 'outside.example' } });
    index.markSynced();
    // The upstream: answers every A query with 192.0.2.7.
    upstream = dgram.createSocket('udp4');
    upstream.on('message', (m, r) => {
      const q = dnsPacket.decode(m);
      upstream.send(dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: q.questions, answers: [{ type: 'A', name: q.questions![0]!.name, ttl: 60, data: '192.0.2.7' }] }), r.port, r.address);
    });
    await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', () => r()));
    upstreamPort = upstream.address().port;
    port = await server.listen({ host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await server.close();
    upstream.close();
  });

  it('answers over UDP and TCP, authoritatively', async () => {
    const u = await udpAsk(port, query('big.default.svc.cluster.local'));
    assert.equal(u.id, 4242);
    assert.equal(u.flag_aa, true);
    const t = await tcpAsk(port, query('big.default.svc.cluster.local'));
    assert.equal(t.answers!.length, 60, 'all sixty endpoints over TCP');
    assert.equal(t.flag_tc, false);
  });

  it('a UDP answer over 512 bytes is cut and marked TC; an EDNS0 client gets up to its buffer size', async () => {
    const u = await udpAsk(port, query('big.default.svc.cluster.local'));
    assert.equal(u.flag_tc, true);
    assert.ok(u.answers!.length > 0 && u.answers!.length < 60, `${u.answers!.length} answers`);
    const e = await udpAsk(port, { ...query('big.default.svc.cluster.local'), additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }] });
    assert.equal(e.flag_tc, false);
    assert.equal(e.answers!.length, 60);
  });

  it('forwards other names and follows an ExternalName to its target', async () => {
    const f = await udpAsk(port, query('www.example.org'));
    assert.deepEqual(f.answers!.map((a) => 'data' in a && a.data), ['192.0.2.7']);
    const c = await udpAsk(port, query('ext.default.svc.cluster.local'));
    assert.deepEqual(c.answers!.map((a) => [a.type, 'data' in a && a.data]), [['CNAME', 'outside.example'], ['A', '192.0.2.7']]);
  });

  it('NXDOMAIN over the wire, and SERVFAIL when no upstream answers', async () => {
    assert.equal(rcode(await udpAsk(port, query('nope.default.svc.cluster.local'))), 'NXDOMAIN');
    const was = upstreamPort;
    upstreamPort = 1;
    try {
      assert.equal(rcode(await udpAsk(port, query('www.example.org'))), 'SERVFAIL');
    } finally {
      upstreamPort = was;
    }
  });

  it('refuses a client the node does not serve (loopback always may ask)', async () => {
    allow = false;
    try {
      assert.equal(rcode(await udpAsk(port, query('big.default.svc.cluster.local'))), 'NOERROR', 'loopback');
      const r = await server.handle(dnsPacket.encode(query('big.default.svc.cluster.local')), 'udp', '203.0.113.9');
      assert.equal(rcode(dnsPacket.decode(r!)), 'REFUSED');
    } finally {
      allow = true;
    }
  });

  it('a repeated question gets its answer with its own ID, and a change in the cluster shows at once', async () => {
    const ask = (id: number) => udpAsk(port, { ...query('moving.default.svc.cluster.local'), id });
    assert.equal(rcode(await ask(1)), 'NXDOMAIN');
    assert.equal((await ask(2)).id, 2);
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'moving', namespace: 'default' }, spec: { clusterIP: '10.43.0.77', ports: [{ port: 80 }] } };
    index.setService(svc);
    const a = await ask(3);
    assert.equal(a.id, 3);
    assert.deepEqual(a.answers!.map((x) => 'data' in x && x.data), ['10.43.0.77']);
    index.setService({ ...svc, spec: { ...svc.spec, clusterIP: '10.43.0.78' } });
    assert.deepEqual((await ask(4)).answers!.map((x) => 'data' in x && x.data), ['10.43.0.78']);
  });
});
