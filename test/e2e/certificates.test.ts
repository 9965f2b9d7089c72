// CertificateSigningRequests end to end, with a real server and real kubectl (1.33 and 1.27): a
// user's request approved with `kubectl certificate approve` gets a certificate that
// authenticates as that user; a denied one gets none; bad requests come back as a Status with
// causes; someone without `approve` on the signer is refused; and an agent joins through a CSR
// (--tls-bootstrap) that the csrapproving controller approves, its Node going Ready.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { TEST_JOIN_TOKEN, TestAgent, TestServer, eventually, runKubectl } from '../support/cluster.js';
import { isStatusError } from '../../src/api/errors.js';
import { renderKubeconfig } from '../../src/pki/kubeconfig.js';

x509.cryptoProvider.set(webcrypto as never);

async function keyAndCsr(subject: string): Promise<{ keyPem: string; csrPem: string }> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: subject, keys: keys as never, signingAlgorithm: alg });
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64');
  return { keyPem: `-----BEGIN PRIVATE KEY-----\n${der}\n-----END PRIVATE KEY-----\n`, csrPem: csr.toString('pem') + '\n' };
}

function csrManifest(name: string, csrPem: string, extra = ''): string {
  return `apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: ${name}}
spec:
  request: ${Buffer.from(csrPem).toString('base64')}
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
${extra}`;
}

interface Csr {
  spec: { username?: string; groups?: string[]; expirationSeconds?: number };
  status?: { certificate?: string; conditions?: { type: string; status: string; reason?: string }[] };
}

describe('CertificateSigningRequests', () => {
  const s = new TestServer('csr');
  const dir = mkdtempSync(join(tmpdir(), 'csr-users-'));
  before(async () => {
    await s.start(['--token', TEST_JOIN_TOKEN]);
  });
  after(async () => {
    await s.stop();
    s.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A kubeconfig for the user whose key and issued certificate these are. */
  function userKubeconfig(user: string, keyPem: string, certPem: string): { kubeconfig: string; cacheDir: string } {
    const admin = readFileSync(s.kubeconfig, 'utf8');
    const server = /server: (\S+)/.exec(admin)![1]!;
    const kubeconfig = join(dir, `${user}.kubeconfig`);
    writeFileSync(kubeconfig, renderKubeconfig({ clusterName: 'csr', server, caPem: readFileSync(join(s.dataDir, 'tls', 'ca.crt'), 'utf8'), user, clientCertPem: certPem, clientKeyPem: keyPem }));
    return { kubeconfig, cacheDir: mkdtempSync(join(dir, `${user}-cache-`)) };
  }

  async function csr(name: string): Promise<Csr> {
    return JSON.parse(await s.k(['get', 'csr', name, '-o', 'json'])) as Csr;
  }

  it('approved with kubectl 1.33, issues a certificate that authenticates as its subject', async () => {
    const { keyPem, csrPem } = await keyAndCsr('CN=alice, O=devs');
    // What the client says of the requester is replaced by who sent it.
    await s.k(['create', '-f', '-'], { input: csrManifest('alice', csrPem, '  expirationSeconds: 86400\n  username: mallory\n') });
    const pending = await csr('alice');
    assert.equal(pending.spec.username, 'skiff-admin');
    assert.ok(pending.spec.groups?.includes('system:masters'));
    const rows = (await s.k(['get', 'csr', 'alice'])).trim().split('\n').map((l) => l.trim().split(/\s{2,}/));
    assert.deepEqual(rows[0], ['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    assert.deepEqual([rows[1]![0], rows[1]![2], rows[1]![3], rows[1]![4], rows[1]![5]], ['alice', 'kubernetes.io/kube-apiserver-client', 'skiff-admin', '24h', 'Pending']);

    assert.match(await s.k(['certificate', 'approve', 'alice'], { version: '1.33' }), /certificatesigningrequest.certificates.k8s.io\/alice approved/);
    const issued = await eventually(async () => {
      const c = await csr('alice');
      return c.status?.certificate ? c : undefined;
    }, 15_000, 'alice issued');
    assert.deepEqual(issued.status?.conditions?.map((c) => [c.type, c.status, c.reason]), [['Approved', 'True', 'KubectlApprove']]);
    const certPem = Buffer.from(issued.status!.certificate!, 'base64').toString();
    const cert = new x509.X509Certificate(certPem);
    assert.equal(cert.subject, 'CN=alice, O=devs');
    // expirationSeconds is honoured (less the five minutes the signer backdates).
    assert.equal(cert.notAfter.getTime() - cert.notBefore.getTime(), 86_400_000);
    assert.match((await s.k(['get', 'csr', 'alice'])).split('\n')[1]!, /Approved,Issued\s*$/);

    const alice = userKubeconfig('alice', keyPem, certPem);
    const whoami = await runKubectl(alice, ['auth', 'whoami', '-o', 'json']);
    assert.equal(whoami.code, 0, whoami.stderr);
    const review = JSON.parse(whoami.stdout) as { status: { userInfo: { username: string; groups: string[] } } };
    assert.equal(review.status.userInfo.username, 'alice');
    assert.deepEqual(review.status.userInfo.groups, ['devs', 'system:authenticated']);
    // And alice may not approve requests: she holds no role.
    const refused = await runKubectl(alice, ['certificate', 'approve', 'alice']);
    assert.notEqual(refused.code, 0);
  });

  it('denied with kubectl 1.27, gets a Denied condition and no certificate', async () => {
    const { csrPem } = await keyAndCsr('CN=bob');
    await s.k(['create', '-f', '-'], { input: csrManifest('bob', csrPem) });
    assert.match(await s.k(['certificate', 'deny', 'bob'], { version: '1.27' }), /certificatesigningrequest.certificates.k8s.io\/bob denied/);
    const denied = await csr('bob');
    assert.deepEqual(denied.status?.conditions?.map((c) => [c.type, c.status, c.reason]), [['Denied', 'True', 'KubectlDeny']]);
    assert.equal(denied.status?.certificate, undefined);
    assert.match((await s.k(['get', 'csr', 'bob'])).split('\n')[1]!, /Denied\s*$/);
    // kubectl will not approve it now, nor will the server: Approved and Denied exclude each other.
    const client = s.client();
    try {
      const current = await client.get<Csr>('/apis/certificates.k8s.io/v1/certificatesigningrequests/bob');
      current.status!.conditions!.push({ type: 'Approved', status: 'True', reason: 'Changed my mind' });
      await assert.rejects(client.replace('/apis/certificates.k8s.io/v1/certificatesigningrequests/bob/approval', current), (e: unknown) => {
        assert.ok(isStatusError(e, 'Invalid'));
        assert.match(e.message, /status\.conditions\[1\]\.type: Invalid value: "Approved": Approved and Denied conditions are mutually exclusive/);
        return true;
      });
    } finally {
      client.close();
    }
  });

  it('answers a bad request with a Status and its causes', async () => {
    const client = s.client();
    try {
      await assert.rejects(
        client.create('/apis/certificates.k8s.io/v1/certificatesigningrequests', {
          apiVersion: 'certificates.k8s.io/v1',
          kind: 'CertificateSigningRequest',
          metadata: { name: 'bad' },
          spec: { request: Buffer.from('hello').toString('base64'), signerName: 'example', expirationSeconds: 100, usages: ['client auth', 'flying'] },
        }),
        (e: unknown) => {
          assert.ok(isStatusError(e, 'Invalid'));
          assert.equal(e.status.code, 422);
          assert.deepEqual(
            e.status.details?.causes?.map((c) => [c.field, c.reason]),
            [
              ['spec.request', 'FieldValueInvalid'],
              ['spec.usages[1]', 'FieldValueNotSupported'],
              ['spec.signerName', 'FieldValueInvalid'],
              ['spec.expirationSeconds', 'FieldValueInvalid'],
            ],
          );
          assert.match(e.message, /spec\.request: Invalid value: \[\]byte\{0x68, 0x65, 0x6c, 0x6c, 0x6f\}: PEM block type must be CERTIFICATE REQUEST/);
          assert.match(e.message, /spec\.expirationSeconds: Invalid value: 100: may not specify a duration less than 600 seconds \(10 minutes\)/);
          return true;
        },
      );
    } finally {
      client.close();
    }
    const { csrPem } = await keyAndCsr('CN=root, O=system:masters');
    const masters = await s.kubectl(['create', '-f', '-'], { input: csrManifest('root', csrPem) });
    assert.match(masters.stderr, /is forbidden: use of kubernetes.io\/kube-apiserver-client signer with system:masters group is not allowed/);
  });

  it('refuses an approver without approve on the signer, in upstream words', async () => {
    const { keyPem, csrPem } = await keyAndCsr('CN=carol');
    await s.k(['create', '-f', '-'], { input: csrManifest('carol', csrPem) });
    await s.k(['certificate', 'approve', 'carol']);
    const certPem = await eventually(async () => {
      const c = await csr('carol');
      return c.status?.certificate ? Buffer.from(c.status.certificate, 'base64').toString() : undefined;
    }, 15_000, 'carol issued');
    // The signer, which has issued carol's since, never issued bob's denied request.
    assert.equal((await csr('bob')).status?.certificate, undefined);
    // carol may update approvals, but holds no `approve` on any signer.
    await s.k(['create', 'clusterrole', 'csr-approval', '--verb=get,list,update', '--resource=certificatesigningrequests,certificatesigningrequests/approval']);
    await s.k(['create', 'clusterrolebinding', 'carol-csr-approval', '--clusterrole=csr-approval', '--user=carol']);
    const { csrPem: davePem } = await keyAndCsr('CN=dave');
    await s.k(['create', '-f', '-'], { input: csrManifest('dave', davePem) });
    const carol = userKubeconfig('carol', keyPem, certPem);
    const refused = await eventually(async () => {
      const r = await runKubectl(carol, ['certificate', 'approve', 'dave']);
      return /user not permitted/.test(r.stderr) ? r : undefined;
    }, 10_000, 'carol refused by CertificateApproval');
    assert.match(refused.stderr, /certificatesigningrequests.certificates.k8s.io "dave" is forbidden: user not permitted to approve requests with signerName "kubernetes.io\/kube-apiserver-client"/);
    await s.k(['create', 'clusterrolebinding', 'carol-approver', '--clusterrole=system:certificates.k8s.io:kube-apiserver-client-approver', '--user=carol']);
    await eventually(async () => (await runKubectl(carol, ['certificate', 'approve', 'dave'])).code === 0, 10_000, 'carol approves once she may');
  });

  it('joins an agent through a CSR that the csrapproving controller approves', async () => {
    const agent = new TestAgent(s, 'csr-node');
    try {
      await agent.start(['--runtime', 'simulated', '--tls-bootstrap']);
      const list = JSON.parse(await s.k(['get', 'csr', '-o', 'json'])) as { items: (Csr & { metadata: { name: string }; spec: { signerName: string } })[] };
      const mine = list.items.filter((c) => c.spec.username === `system:bootstrap:${TEST_JOIN_TOKEN.split('.')[0]}`);
      assert.equal(mine.length, 1);
      assert.equal(mine[0]!.spec.signerName, 'kubernetes.io/kube-apiserver-client-kubelet');
      assert.deepEqual(mine[0]!.status?.conditions?.map((c) => [c.type, c.reason]), [['Approved', 'AutoApproved']]);
      const cert = new x509.X509Certificate(Buffer.from(mine[0]!.status!.certificate!, 'base64').toString());
      assert.equal(cert.subject, 'CN=system:node:csr-node, O=system:nodes');
      assert.equal(agent.logLines('joined the cluster through a certificate signing request; node credential stored').length, 1);
    } finally {
      await agent.stop();
    }
  });
});
