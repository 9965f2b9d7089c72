// The built-in signers' certificates (upstream's PermissiveSigningPolicy: the request's subject
// and SANs, the usages asked for, five minutes of backdating, the duration asked for within
// [10 min, --cluster-signing-duration]) and the cleaner's deadlines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createCertificateAuthority, signForRequest } from '../../src/pki/certificates.js';
import { DEFAULT_CLUSTER_SIGNING_DURATION_MS, certificateDurationMs } from '../../src/controllers/csr-signing.js';
import { cleanupDeadline } from '../../src/controllers/csr-cleaner.js';
import type { CertificateSigningRequest } from '../../src/api/kinds/certificatesigningrequest.js';

x509.cryptoProvider.set(webcrypto as never);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const MIN = 60_000;
const HOUR = 60 * MIN;

async function csrPem(subject: string, sans: x509.JsonGeneralName[] = []): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const extensions = sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [];
  return (await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys: keys as never, signingAlgorithm: ALG, extensions })).toString('pem');
}

test('the duration: what was asked, at least 10 minutes, at most --cluster-signing-duration (a year by default)', () => {
  assert.equal(DEFAULT_CLUSTER_SIGNING_DURATION_MS, 365 * 24 * HOUR);
  assert.equal(certificateDurationMs(undefined, DEFAULT_CLUSTER_SIGNING_DURATION_MS), DEFAULT_CLUSTER_SIGNING_DURATION_MS);
  assert.equal(certificateDurationMs(3600, DEFAULT_CLUSTER_SIGNING_DURATION_MS), HOUR);
  assert.equal(certificateDurationMs(60, DEFAULT_CLUSTER_SIGNING_DURATION_MS), 10 * MIN);
  assert.equal(certificateDurationMs(10 * 365 * 86_400, 48 * HOUR), 48 * HOUR);
});

test("a certificate carries the request's subject and SANs, the usages asked for, and is no CA", async () => {
  const ca = await createCertificateAuthority('test-ca');
  const now = Date.parse('2026-12-08T01:00:00Z');
  const pem = await signForRequest(ca, await csrPem('CN=system:node:n1, O=system:nodes', [{ type: 'dns', value: 'n1.example.com' }, { type: 'ip', value: '10.0.0.7' }]), {
    usages: ['digital signature', 'key encipherment', 'server auth'],
    ttlMs: 24 * HOUR,
    now,
  });
  const cert = new x509.X509Certificate(pem);
  assert.equal(cert.subject, 'CN=system:node:n1, O=system:nodes');
  assert.equal(cert.issuer, 'CN=test-ca');
  assert.ok(await cert.verify({ publicKey: new x509.X509Certificate(ca.certPem).publicKey, signatureOnly: true }));
  // Backdated five minutes; a long certificate also ends five minutes early, so it lasts exactly the ttl.
  assert.equal(cert.notBefore.getTime(), now - 5 * MIN);
  assert.equal(cert.notAfter.getTime(), now + 24 * HOUR - 5 * MIN);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
  assert.deepEqual(san.names.toJSON(), [{ type: 'dns', value: 'n1.example.com' }, { type: 'ip', value: '10.0.0.7' }]);
  assert.equal(cert.getExtension(x509.KeyUsagesExtension)!.usages, x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment);
  assert.deepEqual([...cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages], [x509.ExtendedKeyUsage.serverAuth]);
  assert.equal(cert.getExtension(x509.BasicConstraintsExtension)!.ca, false);

  // A short one keeps its whole life after now; none outlives its CA.
  const short = new x509.X509Certificate(await signForRequest(ca, await csrPem('CN=alice'), { usages: ['client auth'], ttlMs: HOUR, now }));
  assert.equal(short.notAfter.getTime(), now + HOUR);
  const long = new x509.X509Certificate(await signForRequest(ca, await csrPem('CN=alice'), { usages: ['client auth'], ttlMs: 100 * 365 * 24 * HOUR, now }));
  assert.equal(long.notAfter.getTime(), new x509.X509Certificate(ca.certPem).notAfter.getTime());
  assert.equal(long.getExtension(x509.KeyUsagesExtension), null);
});

function csr(created: string, status: CertificateSigningRequest['status'] = {}): CertificateSigningRequest {
  return { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: 'x', creationTimestamp: created }, spec: { request: '', signerName: 'example.com/x' }, status };
}

test('the cleaner: pending a day, denied or failed an hour, issued an hour or expired', async () => {
  const t0 = Date.parse('2026-12-08T00:00:00Z');
  const at = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
  assert.deepEqual(cleanupDeadline(csr(at(t0))), { at: t0 + 24 * HOUR, why: 'pending for more than 24h' });
  assert.deepEqual(cleanupDeadline(csr(at(t0), { conditions: [{ type: 'Denied', status: 'True', lastUpdateTime: at(t0 + MIN) }] })), { at: t0 + MIN + HOUR, why: 'denied more than 1h ago' });
  assert.deepEqual(cleanupDeadline(csr(at(t0), { conditions: [{ type: 'Failed', status: 'True', lastUpdateTime: at(t0 + MIN) }] })), { at: t0 + MIN + HOUR, why: 'failed more than 1h ago' });
  // Approved but not issued: its signer may still come; nothing deletes it.
  assert.equal(cleanupDeadline(csr(at(t0), { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: at(t0) }] })), undefined);
  const ca = await createCertificateAuthority('test-ca');
  const now = Date.now();
  const shortCert = await signForRequest(ca, await csrPem('CN=alice'), { usages: ['client auth'], ttlMs: 10 * MIN, now });
  const issued = csr(at(now), { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: at(now) }], certificate: Buffer.from(shortCert).toString('base64') });
  const deadline = cleanupDeadline(issued)!;
  assert.equal(deadline.why, 'its certificate has expired');
  assert.ok(Math.abs(deadline.at - (now + 10 * MIN)) < 1000);
});
