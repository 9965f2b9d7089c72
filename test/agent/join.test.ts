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

test('a TLS bootstrap waits out a server that cannot answer for a moment, on the request it posted, and posts no second one', async () => {
  const https = await import('node:https');
  const ca = await createCertificateAuthority('bootstrap');
  const serving = await issueCertificate(ca, { commonName: 'skiff-apiserver', hosts: ['127.0.0.1'], usage: 'server' });
  const issued = await issueCertificate(ca, { commonName: 'system:node:n2', organizations: ['system:nodes'], usage: 'client' });
  const caFile = join(dir, 'bootstrap-ca.crt');
  writeFileSync(caFile, ca.certPem);
  let posts = 0;
  let gets = 0;
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const answer = (code: number, body: unknown) => res.writeHead(code, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    req.resume();
    if (req.method === 'POST') return void (posts++, answer(201, { metadata: { name: 'csr-abc' } }));
    gets++;
    if (gets === 1) return answer(200, { metadata: { name: 'csr-abc' } });
    if (gets === 2) return answer(503, { kind: 'Status', message: 'etcd is restarting' });
    answer(200, { metadata: { name: 'csr-abc' }, status: { certificate: Buffer.from(issued.certPem, 'latin1').toString('base64') } });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { port } = server.address() as { port: number };
    const state = new AgentStateDir(join(dir, 'bootstrap-agent'));
    const cred = await ensureNodeCredential(state, { servers: [`https://127.0.0.1:${port}`], nodeName: 'n2', caFile, token: 'abcdef.0123456789abcdef', tlsBootstrap: true }, silentLogger());
    assert.equal(cred.certPem, issued.certPem);
    assert.equal(posts, 1, 'one request posted');
    assert.equal(gets, 3);
  } finally {
    server.close();
  }
});
