import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SortedKeys } from '../../src/util/sorted-keys.js';

describe('sorted keys', () => {
  it('keeps keys in order through adds and deletes, once each, and reads a prefix range', () => {
    const k = new SortedKeys();
    k.reset(['/pods/b/x', '/pods/a/y', '/nodes/n1']);
    k.add('/pods/a/a');
    k.add('/pods/a/a');
    k.add('/pods/c/z');
    k.delete('/pods/b/x');
    k.delete('/pods/b/none');
    assert.equal(k.size, 4);
    assert.deepEqual([...k.withPrefix('/pods/')], ['/pods/a/a', '/pods/a/y', '/pods/c/z']);
    assert.deepEqual([...k.withPrefix('/pods/a/')], ['/pods/a/a', '/pods/a/y']);
    assert.deepEqual([...k.withPrefix('/pods/b/')], []);
    assert.deepEqual([...k.withPrefix('')], ['/nodes/n1', '/pods/a/a', '/pods/a/y', '/pods/c/z']);
  });

  it('matches a full sort after thousands of random changes', () => {
    const k = new SortedKeys();
    const model = new Set<string>();
    let seed = 7;
    const next = () => ((seed = (seed * 1103515245 + 12345) >>> 0) % 500).toString(36);
    for (let i = 0; i < 5000; i++) {
      const key = `/k/${next()}`;
      if (i % 3 === 0) {
        k.delete(key);
        model.delete(key);
      } else {
        k.add(key);
        model.add(key);
      }
    }
    assert.deepEqual([...k.withPrefix('/k/')], [...model].sort());
  });

  it('keeps order and prefix ranges across chunks that split and empty', () => {
    for (const chunk of [1, 2, 4]) {
      const k = new SortedKeys(chunk);
      const model = new Set<string>();
      let seed = 11;
      const next = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
      const key = () => `/${'abc'[next(3)]}/${next(60).toString(36)}`;
      for (let i = 0; i < 40; i++) model.add(key());
      k.reset([...model].reverse());
      for (let i = 0; i < 4000; i++) {
        const x = key();
        if (next(5) < 2) {
          k.delete(x);
          model.delete(x);
        } else {
          k.add(x);
          model.add(x);
        }
        if (i % 97 === 0) {
          const sorted = [...model].sort();
          assert.equal(k.size, model.size, `size, chunks of ${chunk}`);
          for (const prefix of ['', '/a/', '/b/', '/c/', '/b/1', '/0', '/d/']) {
            assert.deepEqual([...k.withPrefix(prefix)], sorted.filter((s) => s.startsWith(prefix)), `prefix ${prefix}, chunks of ${chunk}`);
          }
        }
      }
      // Emptied completely, it starts again from nothing.
      for (const x of [...model]) k.delete(x);
      assert.equal(k.size, 0);
      assert.deepEqual([...k.withPrefix('')], []);
      k.add('/z');
      assert.deepEqual([...k.withPrefix('')], ['/z']);
    }
  });
});
