import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { natRules, proxyChains } from '../../src/agent/service-proxy/iptables-rules.js';
import type { Service, ServicePort } from '../../src/api/kinds/service.js';
import type { EndpointSlice } from '../../src/api/kinds/endpointslice.js';

const svc = (name: string, clusterIP: string, ports: ServicePort[]): Service => ({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: 'shop' }, spec: { clusterIP, ports } });
const slice = (ips: [string, boolean][], port: number): EndpointSlice => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name: 'web-abc', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  ports: [{ name: 'http', port, protocol: 'TCP' }],
  endpoints: ips.map(([ip, ready]) => ({ addresses: [ip], conditions: { ready } })),
});

describe('service rules (iptables)', () => {
  const chains = proxyChains('node-1');

  it('sends a cluster IP and port to one of the ready endpoints, at equal odds, marked for masquerade', () => {
    const web = svc('web', '10.43.0.10', [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }]);
    const { text } = natRules(chains, [web], () => [slice([['10.42.1.3', true], ['10.42.1.2', true], ['10.42.1.4', false], ['10.42.1.5', true]], 8080)], []);
    const lines = text.split('\n');
    assert.equal(lines[0], '*nat');
    const jump = lines.find((l) => l.startsWith(`-A ${chains.services} -d 10.43.0.10/32 -p tcp -m tcp --dport 80`));
    assert.ok(jump, text);
    const dnat = lines.filter((l) => l.includes('-j DNAT'));
    assert.deepEqual(dnat.map((l) => l.split('--to-destination ')[1]), ['10.42.1.2:8080', '10.42.1.3:8080', '10.42.1.5:8080'], 'ready endpoints only, in a stable order');
    const odds = lines.filter((l) => l.includes('--probability')).map((l) => Number(/--probability (\S+)/.exec(l)![1]));
    assert.deepEqual(odds.map((p) => p.toFixed(4)), ['0.3333', '0.5000'], 'first of three, then one of two, then the last');
    assert.ok(lines.includes(`-A ${chains.postrouting} -m mark --mark 0x4000/0x4000 -j MASQUERADE`));
    assert.equal(lines.filter((l) => l.includes('--set-xmark 0x4000/0x4000')).length, 3);
    assert.ok(lines.every((l) => !l.startsWith(':') || l.slice(1).split(' ')[0]!.length <= 28), 'chain names iptables accepts');
  });

  it('writes no rule for a Service without ready endpoints, a headless one or an ExternalName; deletes chains no longer needed', () => {
    const web = svc('web', '10.43.0.10', [{ name: 'http', port: 80 }]);
    const first = natRules(chains, [web], () => [slice([['10.42.1.2', true]], 8080)], []);
    const headless = svc('db', 'None', [{ name: 'pg', port: 5432 }]);
    const second = natRules(chains, [web, headless], () => [slice([['10.42.1.2', false]], 8080)], first.chains);
    assert.ok(!second.text.includes('DNAT'));
    const gone = [...first.chains].filter((c) => c !== chains.services && c !== chains.postrouting);
    assert.equal(gone.length, 2, 'a service chain and an endpoint chain');
    for (const c of gone) {
      assert.ok(second.text.includes(`:${c} - [0:0]`), 'flushed');
      assert.ok(second.text.includes(`-X ${c}`), 'then deleted');
    }
  });

  it('names the chains after the node, so agents sharing a machine keep their own', () => {
    assert.notEqual(proxyChains('node-1').services, proxyChains('node-2').services);
    assert.match(proxyChains('node-1').services, /^SKIFF-[0-9A-F]{6}-SERVICES$/);
  });

  it("sends the cluster DNS address (port 53, UDP and TCP) to the node's own DNS server: its pods' queries and its own", () => {
    const { text } = natRules(chains, [], () => [], [], { ips: ['10.43.0.10'], port: 35353, podCidrs: ['10.42.1.0/24'] });
    const dns = text.split('\n').filter((l) => l.includes('cluster DNS'));
    assert.deepEqual(dns, [
      `-A ${chains.services} -s 10.42.1.0/24 -d 10.43.0.10/32 -p udp -m udp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -s 10.42.1.0/24 -d 10.43.0.10/32 -p tcp -m tcp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -m addrtype --src-type LOCAL -d 10.43.0.10/32 -p udp -m udp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -m addrtype --src-type LOCAL -d 10.43.0.10/32 -p tcp -m tcp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
    ]);
    // Without a pod CIDR from the control plane, every query to the address.
    const open = natRules(chains, [], () => [], [], { ips: ['10.43.0.10'], port: 35353, podCidrs: [] }).text;
    assert.match(open, new RegExp(`-A ${chains.services} -d 10\\.43\\.0\\.10/32 -p udp -m udp --dport 53 .*REDIRECT --to-ports 35353`));
  });
});
