// CertificateSigningRequest's rules as upstream's certificates validation and strategies have
// them: the request must parse and be signed by its key, signer names are qualified, usages known
// and unique, conditions consistent, and each write path changes only what it may.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { certificateSigningRequestResource as rt, csrCondition, validateSignerName } from '../../src/api/kinds/certificatesigningrequest.js';
import { apiServerClientProblem, kubeletClientProblem, kubeletServingProblem } from '../../src/api/certificate-signers.js';
import { parseCertificateRequest } from '../../src/pki/certificate-request.js';
import { createCertificateAuthority, issueCertificate } from '../../src/pki/certificates.js';
import type { KubeObject } from '../../src/api/types.js';

x509.cryptoProvider.set(webcrypto as never);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };

async function csrPem(subject: string, sans: x509.JsonGeneralName[] = []): Promise<string> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const extensions = sans.length > 0 ? [new x509.SubjectAlternativeNameExtension(sans)] : [];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys: keys as never, signingAlgorithm: ALG, extensions });
  return csr.toString('pem') + '\n';
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

function csrObject(pem: string, spec: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'node-csr:abc', uid: 'u1', resourceVersion: '1', creationTimestamp: '2026-12-08T00:00:00Z' },
    spec: { request: b64(pem), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], ...spec },
    ...(status ? { status } : {}),
  };
}

function fields(causes: { field?: string; message?: string }[]): string[] {
  return causes.map((c) => `${c.field}: ${c.message}`);
}

test('a valid request passes, whatever its name (upstream does not check CSR names)', async () => {
  assert.deepEqual(rt.validate(csrObject(await csrPem('CN=alice')), undefined), []);
});

test('the request must be a PEM CERTIFICATE REQUEST signed by the key it carries', async () => {
  const pem = await csrPem('CN=alice');
  assert.deepEqual(fields(rt.validate(csrObject('hi'), undefined)), ['spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST']);
  assert.deepEqual(fields(rt.validate(csrObject(pem.replace(/CERTIFICATE REQUEST/g, 'CERTIFICATE')), undefined)).map((f) => f.replace(/\[\]byte\{[^}]*\}/, 'B')), [
    'spec.request: Invalid value: B: PEM block type must be CERTIFICATE REQUEST',
  ]);
  // Flip one bit of the signature (the DER's last byte): it no longer verifies.
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''), 'base64');
  der[der.length - 1] ^= 1;
  const forged = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const causes = rt.validate(csrObject(forged), undefined);
  assert.equal(causes.length, 1);
  assert.match(causes[0]!.message!, /: x509: ECDSA verification failure$/);
});

test('signerName, usages and expirationSeconds, with upstream messages', async () => {
  const pem = await csrPem('CN=alice');
  assert.deepEqual(fields(rt.validate(csrObject(pem, { signerName: '', usages: [], expirationSeconds: 599 }), undefined)), [
    'spec.usages: Required value',
    'spec.signerName: Required value',
    'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
  ]);
  assert.deepEqual(fields(rt.validate(csrObject(pem, { usages: ['client auth', 'bogus', 'client auth'] }), undefined)).map((f) => f.replace(/supported values: .*/, '…')), [
    'spec.usages[1]: Unsupported value: "bogus": …',
    'spec.usages[2]: Duplicate value: "client auth"',
  ]);
  assert.deepEqual(fields(rt.validate(csrObject(pem, { signerName: 'kubernetes.io/legacy-unknown' }), undefined)), [
    'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
  ]);
  assert.deepEqual(fields(validateSignerName('s', 'example.com')), ["s: Invalid value: \"example.com\": must be a fully qualified domain and path of the form 'example.com/signer-name'"]);
  assert.deepEqual(fields(validateSignerName('s', 'example/foo')), ['s: Invalid value: "example": should be a domain with at least two segments separated by dots']);
  assert.match(fields(validateSignerName('s', 'Example.com/foo'))[0]!, /^s: Invalid value: "Example.com": validating label "Example": a lowercase RFC 1123 label must consist of/);
  assert.match(fields(validateSignerName('s', 'example.com/Foo'))[0]!, /^s: Invalid value: "Foo": validating label "Foo": a lowercase RFC 1123 subdomain must consist of/);
  assert.deepEqual(validateSignerName('s', 'example.com/foo.bar'), []);
});

test('conditions: Approved and Denied exclude each other, types are unique, approval types are only True', async () => {
  const pem = await csrPem('CN=alice');
  const status = { conditions: [{ type: 'Approved', status: 'True' }, { type: 'Denied', status: 'False' }, { type: 'Approved', status: 'True' }, { type: 'Custom', status: 'Maybe' }, { status: 'True' }] };
  assert.deepEqual(fields(rt.validate(csrObject(pem, {}, status), undefined)), [
    'status.conditions[1].status: Unsupported value: "False": supported values: "True"',
    'status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive',
    'status.conditions[2].type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive',
    'status.conditions[2].type: Duplicate value: "Approved"',
    'status.conditions[3].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
    'status.conditions[4].type: Required value',
  ]);
});

test('create records who asked, whatever the client claimed, and starts with an empty status', async () => {
  const o = csrObject(await csrPem('CN=alice'), { username: 'mallory', groups: ['system:masters'], uid: 'x' }, { conditions: [{ type: 'Approved', status: 'True' }] });
  rt.prepareForCreate!(o, { name: 'bob', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } });
  assert.deepEqual(o.spec, { request: (o.spec as { request: string }).request, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'bob', groups: ['devs', 'system:authenticated'], extra: { scopes: ['a'] } });
  assert.deepEqual(o.status, {});
});

test('each write path changes only its part: spec never, approval the conditions, status the certificate', async () => {
  const pem = await csrPem('CN=alice');
  const old = csrObject(pem, { username: 'bob' }, {});
  const ca = await createCertificateAuthority('test');
  const cert = (await issueCertificate(ca, { commonName: 'alice', usage: 'client' })).certPem;

  // A plain update keeps the stored spec and status.
  const edited = csrObject(pem, { username: 'eve', signerName: 'example.com/other' }, { conditions: [{ type: 'Approved', status: 'True' }] });
  rt.prepareForUpdate!(edited, old);
  assert.deepEqual(edited.spec, old.spec);
  assert.deepEqual(edited.status, {});

  // Through /status: Approved may not be added, and the certificate must be CERTIFICATE blocks.
  const viaStatus = csrObject(pem, {}, { conditions: [{ type: 'Approved', status: 'True' }], certificate: b64('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n') });
  rt.prepareForSubresourceUpdate!('status', viaStatus, old, '2026-12-08T01:00:00Z');
  assert.deepEqual(fields(rt.validateSubresourceUpdate!('status', viaStatus, old)), [
    'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "PRIVATE KEY"',
    'status.conditions: Forbidden: updates may not add a condition of type "Approved"',
  ]);

  // Through /approval: conditions get their times; a certificate sent along is dropped.
  const viaApproval = csrObject(pem, {}, { conditions: [{ type: 'Approved', status: 'True', reason: 'R' }], certificate: b64(cert) });
  rt.prepareForSubresourceUpdate!('approval', viaApproval, old, '2026-12-08T01:00:00Z');
  assert.deepEqual(viaApproval.status, { conditions: [{ type: 'Approved', status: 'True', reason: 'R', lastUpdateTime: '2026-12-08T01:00:00Z', lastTransitionTime: '2026-12-08T01:00:00Z' }] });
  assert.deepEqual(rt.validateSubresourceUpdate!('approval', viaApproval, old), []);
  assert.equal(csrCondition(viaApproval), 'Approved');

  // Issued through /status; a second certificate, or an approval's removal, is refused.
  const issued = csrObject(pem, {}, { conditions: (viaApproval.status as { conditions: unknown[] }).conditions, certificate: b64(cert) });
  rt.prepareForSubresourceUpdate!('status', issued, viaApproval, '2026-12-08T01:00:01Z');
  assert.deepEqual(rt.validateSubresourceUpdate!('status', issued, viaApproval), []);
  assert.equal(csrCondition(issued), 'Approved,Issued');
  const other = (await issueCertificate(ca, { commonName: 'mallory', usage: 'client' })).certPem;
  const replaced = csrObject(pem, {}, { certificate: b64(other) });
  assert.deepEqual(fields(rt.validateSubresourceUpdate!('status', replaced, issued)), [
    'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
    'status.certificate: Forbidden: updates may not modify existing certificate content',
  ]);
  assert.deepEqual(fields(rt.validateSubresourceUpdate!('approval', csrObject(pem, {}, { ...(issued.status as object), certificate: b64(other) }), issued)), [
    'status.certificate: Forbidden: updates may not set certificate content',
  ]);
});

test("requests are read as Go's x509 reads them: subject CN and O, every kind of SAN", async () => {
  const pem = await csrPem('CN=system:node:n1, O=system:nodes', [
    { type: 'dns', value: 'n1.example.com' },
    { type: 'ip', value: '10.0.0.7' },
    { type: 'email', value: 'ops@example.com' },
    { type: 'url', value: 'spiffe://cluster/n1' },
  ]);
  const req = parseCertificateRequest(pem);
  assert.equal(req.signatureValid, true);
  assert.equal(req.commonName, 'system:node:n1');
  assert.deepEqual(req.organizations, ['system:nodes']);
  assert.deepEqual([req.dnsNames, req.ipAddresses, req.emailAddresses, req.uris], [['n1.example.com'], ['10.0.0.7'], ['ops@example.com'], ['spiffe://cluster/n1']]);
});

test("the built-in signers' restrictions, in upstream's words", async () => {
  const node = parseCertificateRequest(await csrPem('CN=system:node:n1, O=system:nodes'));
  assert.equal(kubeletClientProblem(node, ['digital signature', 'client auth']), undefined);
  assert.equal(kubeletClientProblem(node, ['digital signature', 'key encipherment', 'client auth']), undefined);
  assert.equal(kubeletClientProblem(node, ['client auth']), 'usages did not match [client auth digital signature key encipherment]');
  assert.equal(kubeletClientProblem(parseCertificateRequest(await csrPem('CN=system:node:n1')), ['client auth']), 'subject organization is not system:nodes');
  assert.equal(kubeletClientProblem(parseCertificateRequest(await csrPem('CN=alice, O=system:nodes')), ['digital signature', 'client auth']), 'subject common name does not begin with system:node:');
  const withDns = parseCertificateRequest(await csrPem('CN=system:node:n1, O=system:nodes', [{ type: 'dns', value: 'n1' }]));
  assert.equal(kubeletClientProblem(withDns, ['digital signature', 'client auth']), 'DNS subjectAltNames are not allowed');
  assert.equal(kubeletServingProblem(node, ['digital signature', 'server auth']), 'DNS or IP subjectAltName is required');
  assert.equal(kubeletServingProblem(withDns, ['digital signature', 'server auth']), undefined);
  assert.equal(apiServerClientProblem(['digital signature', 'client auth']), undefined);
  assert.equal(apiServerClientProblem(['server auth', 'client auth']), 'invalid usage for client certificate: server auth');
  assert.equal(apiServerClientProblem(['digital signature']), 'missing required usage for client certificate: client auth');
});

test('a protobuf body (kubectl >= 1.32 approving) decodes to the JSON a JSON client sends, extra as lists', async () => {
  const { protobufSchema } = await import('../../src/api/schema/root.js');
  const { decodeProtobufObject, PROTOBUF_MAGIC } = await import('../../src/apiserver/protobuf/decode.js');
  const root = protobufSchema();
  const Csr = root.lookupType('k8s.io.api.certificates.v1.CertificateSigningRequest');
  const pem = await csrPem('CN=alice');
  const raw = Csr.encode(
    Csr.fromObject({
      metadata: { name: 'alice' },
      spec: { request: Buffer.from(pem), signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'], username: 'bob', groups: ['devs'], extra: { scopes: { items: ['a', 'b'] } }, expirationSeconds: 600 },
      status: { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'ok', lastUpdateTime: { seconds: 1_796_000_000 } }] },
    }),
  ).finish();
  const Unknown = root.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown');
  const envelope = Unknown.encode(Unknown.fromObject({ typeMeta: { apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest' }, raw })).finish();
  const decoded = decodeProtobufObject(Buffer.concat([Buffer.from(PROTOBUF_MAGIC), Buffer.from(envelope)]));
  assert.deepEqual(decoded.spec, { request: b64(pem), signerName: 'kubernetes.io/kube-apiserver-client', expirationSeconds: 600, usages: ['client auth'], username: 'bob', groups: ['devs'], extra: { scopes: ['a', 'b'] } });
  assert.deepEqual(decoded.status, { conditions: [{ type: 'Approved', status: 'True', reason: 'KubectlApprove', message: 'ok', lastUpdateTime: '2026-11-30T00:53:20Z' }] });
});
