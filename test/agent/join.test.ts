// What an agent trusts when it joins, and how it tells a stored credential from another cluster's:
// only against the CA the operator names (--ca-file or --ca-cert-hash).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JoinError, ensureNodeCredential, verifyCa } from '../../src/agent/join.js';
import { AgentStateDir } from '../../src/agent/state-dir.js';
import { certificateHash, createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import { silentLogger } from '../../src/util/log.js';

const dir = mkdtempSync(join(tmpdir(), 'skiff-join-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('verifyCa: the CA in --ca-file or of --ca-cert-hash passes, another is refused, none named is refused unless insecure', async () => {
  const [ours, theirs] = await Promise.all([createCertificateAuthority('ours'), createCertificateAuthority('theirs')]);
  const file = join(dir, 'ca.crt');
  writeFileSync(file, ours.certPem);
  assert.doesNotThrow(() => verifyCa(ours.certPem, { caFile: file }));
  assert.throws(() => verifyCa(theirs.certPem, { caFile: file }), (e: unknown) => e instanceof JoinError && /does not match .*ca\.crt; refusing to join/.test(e.message));
  assert.doesNotThrow(() => verifyCa(ours.certPem, { caCertHash: certificateHash(ours.certPem) }));
  assert.throws(() => verifyCa(theirs.certPem, { caCertHash: certificateHash(ours.certPem) }), (e: unknown) => e instanceof JoinError && /hash is sha256:[0-9a-f]{64}, not the expected/.test(e.message));
  assert.throws(() => verifyCa(ours.certPem, {}), /cannot verify the cluster CA/);
  assert.doesNotThrow(() => verifyCa(ours.certPem, { insecureSkipCaVerification: true }));
});

test("a stored credential from another cluster's CA is told apart by the trusted hash, before any request", async () => {
  const [old, current] = await Promise.all([createCertificateAuthority('old'), createCertificateAuthority('current')]);
  const state = new AgentStateDir(join(dir, 'agent'));
  const cert = await issueCertificate(old, { commonName: 'system:node:n1', organizations: ['system:nodes'], usage: 'client' });
  state.writeCredential({ ...cert, caPem: old.certPem });
  // No server is listed: a check that needed the network would fail differently.
  const o = { servers: [], nodeName: 'n1', caCertHash: certificateHash(current.certPem) };
  await assert.rejects(ensureNodeCredential(state, o, silentLogger()), (e: unknown) => e instanceof JoinError && /issued by a CA whose hash is not sha256:.*: pass --token to join this cluster/.test(e.message));
  const kept = await ensureNodeCredential(state, { ...o, caCertHash: certificateHash(old.certPem) }, silentLogger());
  assert.equal(kept.certPem, cert.certPem, 'its own cluster: the stored credential is used');
});
