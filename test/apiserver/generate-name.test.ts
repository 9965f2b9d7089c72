import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retryGeneratedName } from '../../src/apiserver/object-store.js';
import { StoreError } from '../../src/store/store.js';

const taken = (name: string) => new StoreError('exists', `${name} already exists`);

describe('generateName retries (upstream RetryGenerateName)', () => {
  it('draws another name while the drawn one is taken', async () => {
    const tried: string[] = [];
    const names = ['gen-b', 'gen-c'];
    const got = await retryGeneratedName('gen-a', () => names.shift()!, async (n) => {
      tried.push(n);
      if (n !== 'gen-c') throw taken(n);
      return n;
    });
    assert.equal(got, 'gen-c');
    assert.deepEqual(tried, ['gen-a', 'gen-b', 'gen-c']);
  });

  it('gives up with the store error after 8 names', async () => {
    let draws = 0;
    let writes = 0;
    await assert.rejects(
      retryGeneratedName('gen-0', () => `gen-${++draws}`, async (n) => {
        writes++;
        throw taken(n);
      }),
      (e) => e instanceof StoreError && e.code === 'exists' && /gen-7 already exists/.test(e.message),
    );
    assert.equal(writes, 8);
    assert.equal(draws, 7);
  });

  it('does not retry other failures', async () => {
    let writes = 0;
    await assert.rejects(
      retryGeneratedName('gen-a', () => 'gen-b', async () => {
        writes++;
        throw new StoreError('unavailable', 'etcd is down');
      }),
      /etcd is down/,
    );
    assert.equal(writes, 1);
  });
});
