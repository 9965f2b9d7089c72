import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../src/store/sqlite.js';
import { loadOrCreateSharedCa, seal, unseal, SHARED_CA_KEY } from '../../src/pki/shared-ca.js';

describe('shared cluster CA', () => {
  it('seals with the token and refuses another token', () => {
    const sealed = seal('secret', 'abcdef.0123456789abcdef');
    assert.doesNotMatch(sealed, /secret/);
    assert.equal(unseal(sealed, 'abcdef.0123456789abcdef'), 'secret');
    assert.throws(() => unseal(sealed, 'zzzzzz.0123456789abcdef'), /different --token/);
  });

  it('is created once and then shared by every member', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sharedca-'));
    const store = await openSqliteStore({ path: join(dir, 'db'), maintenanceIntervalMs: 0 });
    try {
      const [a, b] = await Promise.all([loadOrCreateSharedCa(store, 't0k3n0.0123456789abcdef'), loadOrCreateSharedCa(store, 't0k3n0.0123456789abcdef')]);
      assert.equal(a.certPem, b.certPem);
      const stored = await store.get(SHARED_CA_KEY);
      assert.doesNotMatch(stored!.value, /PRIVATE KEY/);
      await assert.rejects(loadOrCreateSharedCa(store, 'other0.0123456789abcdef'), /different --token/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
