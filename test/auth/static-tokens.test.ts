import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StaticTokens } from '../../src/auth/static-tokens.js';

describe('static token file', () => {
  it('reads token, user, uid and quoted groups as kube-apiserver does', async () => {
    const t = StaticTokens.parse('t1,alice,1,"system:masters, dev"\n\nt2,bob,2\n');
    assert.equal(t.size, 2);
    assert.deepEqual(await t.authenticate('t1'), { name: 'alice', groups: ['system:masters', 'dev'] });
    assert.deepEqual(await t.authenticate('t2'), { name: 'bob', groups: [] });
    assert.equal(await t.authenticate('t3'), undefined);
    assert.equal(await t.authenticate('t1 '), undefined);
  });

  it('refuses short records, empty tokens, repeated tokens and broken quoting, naming the file', () => {
    assert.throws(() => StaticTokens.parse('t1,alice\n', 'tokens.csv'), /tokens\.csv: record 1 has 2 columns; need at least 3/);
    assert.throws(() => StaticTokens.parse(',alice,1\n'), /empty token or user name/);
    assert.throws(() => StaticTokens.parse('t1,a,1\nt1,b,2\n'), /record 2 repeats a token/);
    assert.throws(() => StaticTokens.parse('t1,a,1,"open\n', 'tokens.csv'), /^Error: tokens\.csv: /);
  });

  it('hands out copies, so a caller cannot change who a token stands for', async () => {
    const t = StaticTokens.parse('t1,alice,1,dev\n');
    (await t.authenticate('t1'))!.groups.push('system:masters');
    assert.deepEqual((await t.authenticate('t1'))!.groups, ['dev']);
  });
});
