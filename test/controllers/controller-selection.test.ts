// --controllers as kube-controller-manager reads it: * for the defaults, a name to add one, -name
// to leave one out, an explicit name winning over *, old names accepted, unknown ones refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { allControllers } from '../../src/controllers/index.js';

const names = (selection: string[]) => allControllers(undefined, undefined, undefined, selection).map((c) => c.name);

describe('controller selection', () => {
  it('runs everything by default and leaves out what -name names', () => {
    const all = names(['*']);
    assert.ok(all.includes('resourcequota-controller') && all.includes('scheduler'));
    const fewer = names(['*', '-resourcequota-controller', '-scheduler']);
    assert.equal(fewer.length, all.length - 2);
    assert.ok(!fewer.includes('resourcequota-controller') && !fewer.includes('scheduler'));
  });

  it('runs only the named ones without *, old spellings included', () => {
    assert.deepEqual(names(['deployment', 'replicaset-controller']), ['replicaset', 'deployment']);
  });

  it('refuses a name it does not know', () => {
    assert.throws(() => names(['*', '-nodes']), /--controllers: "nodes" is not in the list of known controllers/);
  });
});
