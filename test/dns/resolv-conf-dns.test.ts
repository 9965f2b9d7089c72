// A pod's resolv.conf as the kubelet assembles it from dnsPolicy, dnsConfig and the node's settings.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatResolvConf, parseResolvConf, podDnsConfig, type NodeDnsSettings } from '../../src/dns/resolv-conf.js';
import type { Pod } from '../../src/api/kinds/pod.js';

const node: NodeDnsSettings = {
  clusterDns: ['10.43.0.10'],
  clusterDomain: 'cluster.local',
  host: parseResolvConf('# comment\nnameserver 192.0.2.53\nnameserver 192.0.2.54\nsearch corp.example lab.example\noptions edns0 timeout:2\n'),
};

function pod(spec: Partial<NonNullable<Pod['spec']>> = {}, namespace = 'shop'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace }, spec: { containers: [], ...spec } };
}

describe('pod resolv.conf', () => {
  it('reads the host resolv.conf', () => {
    assert.deepEqual(node.host, { nameservers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['edns0', 'timeout:2'] });
  });

  it('ClusterFirst (the default): cluster DNS, the namespace search path then the host search domains, ndots:5', () => {
    const c = podDnsConfig(pod(), node);
    assert.deepEqual(c, { servers: ['10.43.0.10'], searches: ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example'], options: ['ndots:5'] });
    assert.equal(formatResolvConf(c), 'nameserver 10.43.0.10\nsearch shop.svc.cluster.local svc.cluster.local cluster.local corp.example lab.example\noptions ndots:5\n');
  });

  it('Default: the host resolv.conf; ClusterFirst on the host network falls back to it, ClusterFirstWithHostNet does not', () => {
    const host = { servers: ['192.0.2.53', '192.0.2.54'], searches: ['corp.example', 'lab.example'], options: ['edns0', 'timeout:2'] };
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'Default' }), node), host);
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'ClusterFirst', hostNetwork: true }), node), host);
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'ClusterFirstWithHostNet', hostNetwork: true }), node).servers, ['10.43.0.10']);
  });

  it('ClusterFirst without a cluster DNS address falls back to the host', () => {
    assert.deepEqual(podDnsConfig(pod(), { ...node, clusterDns: [] }).servers, ['192.0.2.53', '192.0.2.54']);
  });

  it('None takes dnsConfig alone; dnsConfig is merged into the others (options by name, later wins)', () => {
    const none = podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.2.3.4'], searches: ['a.example'], options: [{ name: 'ndots', value: '2' }, { name: 'edns0' }] } }), node);
    assert.deepEqual(none, { servers: ['1.2.3.4'], searches: ['a.example'], options: ['ndots:2', 'edns0'] });
    const merged = podDnsConfig(pod({ dnsConfig: { nameservers: ['10.43.0.10', '1.2.3.4'], searches: ['svc.cluster.local', 'x.example'], options: [{ name: 'ndots', value: '1' }, { name: 'single-request-reopen' }] } }), node);
    assert.deepEqual(merged.servers, ['10.43.0.10', '1.2.3.4'], 'duplicates dropped');
    assert.deepEqual(merged.searches, ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example', 'lab.example', 'x.example']);
    assert.deepEqual(merged.options, ['ndots:1', 'single-request-reopen']);
  });

  it('keeps at most three nameservers', () => {
    assert.deepEqual(podDnsConfig(pod({ dnsPolicy: 'None', dnsConfig: { nameservers: ['1.1.1.1', '2.2.2.2', '3.3.3.3', '4.4.4.4'] } }), node).servers, ['1.1.1.1', '2.2.2.2', '3.3.3.3']);
  });
});
