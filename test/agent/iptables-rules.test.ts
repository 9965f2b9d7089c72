import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceRules, proxyChains } from '../../src/agent/service-proxy/iptables-rules.js';
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
    const { text } = serviceRules(chains, 'node-1', [web], () => [slice([['10.42.1.3', true], ['10.42.1.2', true], ['10.42.1.4', false], ['10.42.1.5', true]], 8080)], []);
    const lines = text.split('\n');
    assert.equal(lines[0], '*nat');
    const jump = lines.find((l) => l.startsWith(`-A ${chains.services} -d 10.43.0.10/32 -p tcp -m tcp --dport 80`));
    assert.ok(jump, text);
    const dnat = lines.filter((l) => l.includes('-j DNAT'));
    assert.deepEqual(dnat.map((l) => l.split('--to-destination ')[1]), ['10.42.1.2:8080', '10.42.1.3:8080', '10.42.1.5:8080'], 'ready endpoints only, in a stable order');
    const odds = lines.filter((l) => l.includes('--probability')).map((l) => Number(/--probability (\S+)/.exec(l)![1]));
    assert.deepEqual(odds.map((p) => p.toFixed(4)), ['0.3333', '0.5000'], 'first of three, then one of two, then the last');
    assert.ok(lines.includes(`-A ${chains.postrouting} -m mark --mark 0x4000/0x4000 -j MASQUERADE`));
    assert.equal(lines.filter((l) => l.includes('--set-xmark 0x4000/0x4000')).length, 1, 'once, in the service chain');
    assert.ok(lines.every((l) => !l.startsWith(':') || l.slice(1).split(' ')[0]!.length <= 28), 'chain names iptables accepts');
  });

  it('rejects a Service without ready endpoints at once, on its cluster IP and its NodePort; writes nothing for a headless one', () => {
    const web = svc('web', '10.43.0.10', [{ name: 'http', port: 80 }]);
    const first = serviceRules(chains, 'node-1', [web], () => [slice([['10.42.1.2', true]], 8080)], []);
    const headless = svc('db', 'None', [{ name: 'pg', port: 5432 }]);
    const second = serviceRules(chains, 'node-1', [web, headless], () => [slice([['10.42.1.2', false]], 8080)], first.chains);
    assert.ok(!second.text.includes('DNAT'));
    assert.ok(second.text.includes(`-A ${chains.filter} -d 10.43.0.10/32 -p tcp -m tcp --dport 80 -m comment --comment "shop/web:http has no endpoints" -j REJECT --reject-with icmp-port-unreachable`), second.text);
    assert.ok(!second.text.includes('5432'));
    const gone = [...first.chains].filter((c) => c !== chains.services && c !== chains.postrouting && c !== chains.nodePorts);
    assert.equal(gone.length, 2, 'a service chain and an endpoint chain');
    for (const c of gone) {
      assert.ok(second.text.includes(`:${c} - [0:0]`), 'flushed');
      assert.ok(second.text.includes(`-X ${c}`), 'then deleted');
    }
  });

  it('answers a NodePort on the node\'s own addresses; Local only to endpoints on this node, dropping where there are none', () => {
    const np = (policy: 'Cluster' | 'Local'): Service => ({ ...svc('web', '10.43.0.10', [{ name: 'http', port: 80, nodePort: 30080, protocol: 'TCP' }]), spec: { type: 'NodePort', clusterIP: '10.43.0.10', externalTrafficPolicy: policy, ports: [{ name: 'http', port: 80, nodePort: 30080, protocol: 'TCP' }] } });
    const onNodes = (nodes: string[]): EndpointSlice => {
      const s = slice(nodes.map((_n, i) => [`10.42.${i}.2`, true]), 8080);
      s.endpoints!.forEach((e, i) => (e.nodeName = nodes[i]));
      return s;
    };
    const cluster = serviceRules(chains, 'node-1', [np('Cluster')], () => [onNodes(['node-2'])], []).text;
    assert.ok(cluster.includes(`-A ${chains.services} -m addrtype --dst-type LOCAL -m comment --comment "node ports" -j ${chains.nodePorts}`), cluster);
    assert.match(cluster, new RegExp(`-A ${chains.nodePorts} -p tcp -m tcp --dport 30080 .* -j ${chains.prefix}S`));
    const here = serviceRules(chains, 'node-1', [np('Local')], () => [onNodes(['node-1', 'node-2'])], []).text;
    const localJump = new RegExp(`-A ${chains.nodePorts} -p tcp -m tcp --dport 30080 .*-j (${chains.prefix}L\\w+)`).exec(here);
    assert.ok(localJump, here);
    const picks = here.split('\n').filter((l) => l.startsWith(`-A ${localJump[1]} `));
    assert.equal(picks.length, 1, 'only the endpoint on node-1');
    assert.ok(!picks[0]!.includes('MARK'), 'the client address is kept');
    const elsewhere = serviceRules(chains, 'node-1', [np('Local')], () => [onNodes(['node-2'])], []).text;
    assert.ok(elsewhere.includes(`-A ${chains.filter} -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -m comment --comment "shop/web:http has no local endpoints" -j DROP`), elsewhere);
  });

  it('keeps a client on its endpoint with sessionAffinity ClientIP, for timeoutSeconds (10800 by default)', () => {
    const web: Service = { ...svc('web', '10.43.0.10', []), spec: { clusterIP: '10.43.0.10', sessionAffinity: 'ClientIP', ports: [{ name: 'http', port: 80, protocol: 'TCP' }] } };
    const text = serviceRules(chains, 'node-1', [web], () => [slice([['10.42.1.2', true], ['10.42.1.3', true]], 8080)], []).text;
    assert.equal(text.split('\n').filter((l) => l.includes('--rcheck --seconds 10800 --reap')).length, 2);
    assert.equal(text.split('\n').filter((l) => l.includes('--rsource --set')).length, 2);
  });

  it('names the chains after the node, so agents sharing a machine keep their own', () => {
    assert.notEqual(proxyChains('node-1').services, proxyChains('node-2').services);
    assert.match(proxyChains('node-1').services, /^SKIFF-[0-9A-F]{6}-SERVICES$/);
  });

  it("sends the cluster DNS address (port 53, UDP and TCP) to the node's own DNS server: its pods' queries and its own", () => {
    const { text } = serviceRules(chains, 'node-1', [], () => [], [], { ips: ['10.43.0.10'], port: 35353, podCidrs: ['10.42.1.0/24'] });
    const dns = text.split('\n').filter((l) => l.includes('cluster DNS'));
    assert.deepEqual(dns, [
      `-A ${chains.services} -s 10.42.1.0/24 -d 10.43.0.10/32 -p udp -m udp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -s 10.42.1.0/24 -d 10.43.0.10/32 -p tcp -m tcp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -m addrtype --src-type LOCAL -d 10.43.0.10/32 -p udp -m udp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
      `-A ${chains.services} -m addrtype --src-type LOCAL -d 10.43.0.10/32 -p tcp -m tcp --dport 53 -m comment --comment "cluster DNS" -j REDIRECT --to-ports 35353`,
    ]);
    // Without a pod CIDR from the control plane, every query to the address.
    const open = serviceRules(chains, 'node-1', [], () => [], [], { ips: ['10.43.0.10'], port: 35353, podCidrs: [] }).text;
    assert.match(open, new RegExp(`-A ${chains.services} -d 10\\.43\\.0\\.10/32 -p udp -m udp --dport 53 .*REDIRECT --to-ports 35353`));
  });
});
