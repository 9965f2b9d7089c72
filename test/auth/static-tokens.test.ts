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

  it('refuses short records and broken quoting naming file and line, and warns as upstream about empty and repeated tokens', async () => {
    assert.throws(() => StaticTokens.parse('t0,root,0\n\nt1,alice\n', 'tokens.csv'), /tokens\.csv line 3: 2 columns; need at least 3/);
    assert.throws(() => StaticTokens.parse('t1,,1\n'), /line 1: empty user name/);
    assert.throws(() => StaticTokens.parse('t1,a,1,"open\n', 'tokens.csv'), /^Error: tokens\.csv: /);
    const warnings: string[] = [];
    const t = StaticTokens.parse(',nobody,1\nt1,a,1\nt1,b,2\n', 'tokens.csv', (m) => warnings.push(m));
    assert.deepEqual(warnings, ['tokens.csv line 1: empty token, skipped', 'tokens.csv line 3: repeats an earlier token, which now stands for b']);
    assert.equal(t.size, 1);
    assert.equal((await t.authenticate('t1'))?.name, 'b');
    assert.equal(await t.authenticate(''), undefined);
  });

  it('hands out copies, so a caller cannot change who a token stands for', async () => {
    const t = StaticTokens.parse('t1,alice,1,dev\n');
    (await t.authenticate('t1'))!.groups.push('system:masters');
    assert.deepEqual((await t.authenticate('t1'))!.groups, ['dev']);
  });
});
