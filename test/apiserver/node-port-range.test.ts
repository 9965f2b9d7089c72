// --service-node-port-range: the flag's parse errors, ports given only from the range, the range
// full, and a requested port outside it refused with the range in the message, as upstream's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceRange, parseNodePortRange } from '../../src/api/service-range.js';
import { allocateNodePorts, checkServiceAddresses } from '../../src/apiserver/admission/service-addresses.js';
import type { KubeObject } from '../../src/api/types.js';

const nodePortService = (ports: { nodePort?: number }[]): KubeObject => ({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'default' }, spec: { type: 'NodePort', ports: ports.map((p, i) => ({ port: 80 + i, ...p })) } });

test('a non-default node port range: given from it until full, a port outside it refused naming it', () => {
  assert.deepEqual(parseNodePortRange('30000-30001'), { base: 30000, max: 30001 });
  assert.throws(() => parseNodePortRange('5-1'), /end port is less than start port: 5-1/);
  assert.throws(() => parseNodePortRange('x'), /unable to parse port range: x/);
  const range = ServiceRange.parse('10.43.0.0/16', '30000-30001');
  const inUse = { clusterIPs: new Set<string>(), nodePorts: new Set<number>() };
  const two = nodePortService([{}, {}]);
  allocateNodePorts(two, inUse, range);
  assert.deepEqual(((two.spec as { ports: { nodePort: number }[] }).ports.map((p) => p.nodePort)).sort(), [30000, 30001]);
  assert.throws(() => allocateNodePorts(nodePortService([{}]), inUse, range), (e: unknown) => /spec\.ports\[0\]\.nodePort.*failed to allocate a nodePort: range is full/s.test(JSON.stringify(e)));
  assert.throws(() => checkServiceAddresses(nodePortService([{ nodePort: 30500 }]), undefined, { clusterIPs: new Set(), nodePorts: new Set() }, range), (e: unknown) => /provided port is not in the valid range\. The range of valid ports is 30000-30001/.test(JSON.stringify(e)));
});
