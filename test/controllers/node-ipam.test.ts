import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SubnetRange } from '../../src/controllers/node-ipam.js';

describe('node IPAM subnets', () => {
  it('splits the cluster CIDR into node CIDRs in order', () => {
    const r = new SubnetRange('10.42.0.0/16', 24);
    assert.equal(r.size, 256);
    assert.equal(r.subnet(0), '10.42.0.0/24');
    assert.equal(r.subnet(1), '10.42.1.0/24');
    assert.equal(r.subnet(255), '10.42.255.0/24');
    const small = new SubnetRange('192.168.4.77/22', 26);
    assert.equal(small.size, 16);
    assert.equal(small.subnet(0), '192.168.4.0/26', 'host bits of the range are ignored');
    assert.equal(small.subnet(5), '192.168.5.64/26');
  });

  it('refuses a range that is not an IPv4 CIDR, or a mask that does not fit it, saying which', () => {
    assert.throws(() => new SubnetRange('10.42.0.0', 24), /is not an IPv4 CIDR/);
    assert.throws(() => new SubnetRange('10.300.0.0/16', 24), /is not an IPv4 CIDR/);
    assert.throws(() => new SubnetRange('10.42.0.0/16', 8), /does not fit in 10\.42\.0\.0\/16/);
    assert.throws(() => new SubnetRange('10.42.0.0/16', 31), /between \/16 and \/30/);
  });
});
