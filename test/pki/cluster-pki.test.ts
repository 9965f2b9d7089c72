// A server's own certificates: a new name (a control-plane endpoint added or moved) reissues the
// serving certificate with it next to the earlier names; the CA and client certificates stay.
// And the values a converted server seals into etcd are its own CA and keys.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureClusterPki } from '../../src/pki/cluster-pki.js';
import { describeCertificate } from '../../src/pki/certificates.js';
import { sealedSharedPki, unseal, SHARED_CA_KEY, SHARED_SERVICE_ACCOUNT_KEY, SHARED_FRONT_PROXY_CA_KEY } from '../../src/pki/shared-ca.js';

describe('cluster PKI', () => {
  it('reissues the serving certificate for a new name, keeping the earlier ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pki-'));
    try {
      const first = await ensureClusterPki(dir, ['127.0.0.1', 'localhost']);
      const same = await ensureClusterPki(dir, ['127.0.0.1', 'localhost']);
      assert.equal(same.server.certPem, first.server.certPem, 'nothing new: nothing reissued');
      const moved = await ensureClusterPki(dir, ['127.0.0.1', 'localhost', 'cp.example.test', '10.0.0.100']);
      assert.notEqual(moved.server.certPem, first.server.certPem);
      assert.deepEqual(describeCertificate(moved.server.certPem).hosts.sort(), ['10.0.0.100', '127.0.0.1', 'cp.example.test', 'localhost']);
      const again = await ensureClusterPki(dir, ['127.0.0.1', 'localhost', '10.0.0.200']);
      assert.deepEqual(describeCertificate(again.server.certPem).hosts.sort(), ['10.0.0.100', '10.0.0.200', '127.0.0.1', 'cp.example.test', 'localhost']);
      assert.equal(again.ca.certPem, first.ca.certPem);
      assert.equal(again.admin.certPem, first.admin.certPem, 'client certificates handed out stay valid');

      const token = 'abcdef.0123456789abcdef';
      const sealed = new Map(sealedSharedPki(join(dir, 'tls'), token).map((e) => [e.key, e.value]));
      assert.deepEqual(JSON.parse(unseal(sealed.get(SHARED_CA_KEY)!, token)), { certPem: first.ca.certPem, keyPem: first.ca.keyPem });
      assert.equal((JSON.parse(unseal(sealed.get(SHARED_SERVICE_ACCOUNT_KEY)!, token)) as { keyPem: string }).keyPem, first.serviceAccountKeyPem);
      assert.equal((JSON.parse(unseal(sealed.get(SHARED_FRONT_PROXY_CA_KEY)!, token)) as { certPem: string }).certPem, first.frontProxyCa.certPem);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
