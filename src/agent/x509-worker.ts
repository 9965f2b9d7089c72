// Runs as a short-lived child process (`node x509-worker.js '<request JSON>'`, answer as JSON on
// stdout): makes the agent's key material with @peculiar/x509. The ASN.1 library and everything it
// allocates go away with the process, so a long-running agent never carries them (~15 MB).
import { errorText } from '../util/error-text.js';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as never);

const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;

export type X509Request = { kind: 'serving'; nodeName: string; hosts: string[] } | { kind: 'csr'; nodeName: string };
export interface X509Result {
  keyPem: string;
  certPem?: string;
  csrPem?: string;
}

function toPem(der: ArrayBuffer, label: string): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

async function make(req: X509Request): Promise<X509Result> {
  const keys = (await webcrypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const keyPem = toPem(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY');
  if (req.kind === 'csr') {
    const csr = await x509.Pkcs10CertificateRequestGenerator.create({
      name: `CN=system:node:${req.nodeName}, O=system:nodes`,
      keys: keys as never,
      signingAlgorithm: SIGN_ALG,
      extensions: [new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true)],
    });
    return { keyPem, csrPem: csr.toString('pem') + '\n' };
  }
  const now = Date.now();
  const serial = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)));
  serial[0] = serial[0]! & 0x7f;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString('hex'),
    name: `CN=${req.nodeName}@${Math.floor(now / 1000)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 86_400_000),
    keys: keys as never,
    signingAlgorithm: SIGN_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
      new x509.SubjectAlternativeNameExtension(req.hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })), false),
    ],
  });
  return { keyPem, certPem: cert.toString('pem') + '\n' };
}

const request = process.argv[2];
if (request) {
  make(JSON.parse(request) as X509Request).then(
    (r) => process.stdout.write(JSON.stringify({ ok: true, result: r })),
    (e: unknown) => {
      process.stdout.write(JSON.stringify({ ok: false, error: errorText(e) }));
      process.exitCode = 1;
    },
  );
}
