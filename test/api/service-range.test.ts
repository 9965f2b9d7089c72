// The Services' address range: parsing with upstream's limits, the kubernetes Service's address,
// membership, and IPv6 written back as Go writes it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceRange } from '../../src/api/service-range.js';
import { parseCidr } from '../../src/api/cidr.js';

describe('service cluster IP range', () => {
  it('keeps the first usable address for kubernetes and allocates inside the block only', () => {
    const r = ServiceRange.parse('10.96.0.0/12');
    assert.equal(r.cidr, '10.96.0.0/12');
    assert.equal(r.kubernetesIp, '10.96.0.1');
    assert.ok(r.contains('10.111.255.254'));
    assert.ok(!r.contains('10.111.255.255'), 'the broadcast address');
    assert.ok(!r.contains('10.96.0.0'), 'the network address');
    assert.ok(!r.contains('10.43.0.5'));
    assert.equal(ServiceRange.parse('10.43.7.0/16').cidr, '10.43.0.0/16');
  });

  it('takes IPv6 ranges and writes addresses in their short form', () => {
    const r = ServiceRange.parse('fd00:10:96::/112');
    assert.equal(r.kubernetesIp, 'fd00:10:96::1');
    assert.ok(r.contains('fd00:10:96::ffff'));
    assert.ok(!r.contains('10.96.0.1'));
  });

  it('refuses what upstream refuses, in its words', () => {
    assert.throws(() => ServiceRange.parse('10.0.0.0/8'), /specified --service-cluster-ip-range is too large; for 32-bit addresses, the mask must be >= 12/);
    assert.throws(() => ServiceRange.parse('fd00::/64'), /for 128-bit addresses, the mask must be >= 108/);
    assert.throws(() => ServiceRange.parse('ten/16'), /is not a valid CIDR/);
  });

  it('reads no zone in a CIDR, as Go does not', () => {
    assert.equal(parseCidr('fe80::1%eth0/64'), undefined);
    assert.ok(parseCidr('fe80::1/64'));
  });
});
