import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NodeIpamController, SubnetRange } from '../../src/controllers/node-ipam.js';
import { systemClock } from '../../src/util/clock.js';
import { addNode, events, getNode, harness, until, type Harness } from './node-lifecycle-harness.js';

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

describe('node IPAM controller', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  it('gives each Node its own range once; a deleted Node\'s range to no one else while another is free; a full range says CIDRNotAvailable, and a freed one goes to the Node waiting', async () => {
    h = await harness({ clock: systemClock });
    const hh = h;
    const cidr = async (name: string) => (await getNode(hh.client, name))?.spec?.podCIDR;
    // Three ranges of four addresses: 10.9.0.0/30, .4/30, .8/30 (and .12/30).
    hh.start(new NodeIpamController({ clusterCIDR: '10.9.0.0/28', nodeCidrMaskSize: 30 }));
    for (const n of ['a', 'b', 'c']) await addNode(hh.client, hh.clock, n);
    const given = await Promise.all(['a', 'b', 'c'].map((n) => until(() => cidr(n), `${n} has a range`)));
    assert.deepEqual([...given].sort(), ['10.9.0.0/30', '10.9.0.4/30', '10.9.0.8/30'], 'distinct ranges, none twice');
    assert.deepEqual((await getNode(hh.client, 'a'))?.spec?.podCIDRs, [await cidr('a')]);

    // b goes: its range is held back while another is free, so d gets the last one.
    const bRange = await cidr('b');
    await hh.client.delete('/api/v1/nodes/b');
    await addNode(hh.client, hh.clock, 'd');
    assert.equal(await until(() => cidr('d'), 'd has a range'), '10.9.0.12/30');
    // Only b's is left: held back no longer when nothing else is.
    await addNode(hh.client, hh.clock, 'e');
    assert.equal(await until(() => cidr('e'), 'e has a range'), bRange);
    // Every range taken: f waits and is told so.
    await addNode(hh.client, hh.clock, 'f');
    await until(async () => (await events(hh.client, 'CIDRNotAvailable')).some((e) => (e.involvedObject as { name?: string }).name === 'f'), 'CIDRNotAvailable for f');
    assert.equal(await cidr('f'), undefined);
    // a goes: f gets its range without an update of its own to wake the controller.
    const aRange = await cidr('a');
    await hh.client.delete('/api/v1/nodes/a');
    assert.equal(await until(() => cidr('f'), 'f has a range once one is freed'), aRange);
  });
});
