// The cluster CA and the certificates it signs. ECDSA P-256 keys, PEM on disk, made with
// @peculiar/x509 over Node's WebCrypto so no openssl binary is needed.
import { createHash, webcrypto, randomBytes, X509Certificate as NodeX509 } from 'node:crypto';
import { isIP } from 'node:net';
// @peculiar/x509 resolves its ASN.1 services through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

const crypto = webcrypto;
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
x509.cryptoProvider.set(crypto as never);

const KEY_ALG = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN_ALG = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY = 86_400_000;

export interface CertificateAuthority {
  certPem: string;
  keyPem: string;
}

export interface IssuedCertificate {
  certPem: string;
  keyPem: string;
}

export interface CertificateRequest {
  commonName: string;
  organizations?: string[];
  /** DNS names and IP addresses for the subjectAltName (servers). */
  hosts?: string[];
  usage: 'server' | 'client' | 'server-and-client';
  validDays?: number;
}

function toPem(der: ArrayBuffer, label: string): string {
  const b64 = Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').replace(/\n$/, '');
  return `-----BEGIN ${label}-----\n${b64}\n-----END ${label}-----\n`;
}

function fromPem(pem: string): ArrayBuffer {
  const b64 = pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
  const buf = Buffer.from(b64, 'base64');
  return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
}

async function newKeyPair(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(KEY_ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

async function exportKey(key: CryptoKey): Promise<string> {
  return toPem(await crypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}

function serial(): string {
  // Positive, 16 random bytes: unique without keeping a counter on disk.
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

function escapeDn(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1');
}

/** A fresh P-256 private key (PKCS#8 PEM) for signing something other than certificates: service-account tokens. */
export async function createSigningKey(): Promise<string> {
  return exportKey((await newKeyPair()).privateKey);
}

export async function createCertificateAuthority(commonName: string, validDays = 3650): Promise<CertificateAuthority> {
  const keys = await newKeyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${escapeDn(commonName)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + validDays * DAY),
    keys: keys as never,
    signingAlgorithm: SIGN_ALG,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await exportKey(keys.privateKey) };
}

export async function issueCertificate(ca: CertificateAuthority, req: CertificateRequest): Promise<IssuedCertificate> {
  const keys = await newKeyPair();
  const certPem = await signCertificate(ca, keys.publicKey, req);
  return { certPem, keyPem: await exportKey(keys.privateKey) };
}

/**
 * Signs a PKCS#10 request: the requester keeps its private key. The request's own subject is
 * ignored; the caller decides the identity (e.g. system:node:<name>).
 */
export async function signCertificateRequest(ca: CertificateAuthority, csrPem: string, req: CertificateRequest): Promise<string> {
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(csrPem);
  } catch (e) {
    throw new Error(`not a PEM certificate request: ${(e as Error).message}`);
  }
  if (!(await csr.verify())) throw new Error('the certificate request signature does not verify');
  const publicKey = await csr.publicKey.export();
  return signCertificate(ca, publicKey as unknown as CryptoKey, req);
}

async function signCertificate(ca: CertificateAuthority, publicKey: CryptoKey, req: CertificateRequest): Promise<string> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await crypto.subtle.importKey('pkcs8', fromPem(ca.keyPem), KEY_ALG, false, ['sign']);
  const now = Date.now();
  const subject = [`CN=${escapeDn(req.commonName)}`, ...(req.organizations ?? []).map((o) => `O=${escapeDn(o)}`)].join(', ');
  const usages: string[] = [];
  if (req.usage !== 'client') usages.push(x509.ExtendedKeyUsage.serverAuth);
  if (req.usage !== 'server') usages.push(x509.ExtendedKeyUsage.clientAuth);
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
    new x509.ExtendedKeyUsageExtension(usages, false),
    await x509.AuthorityKeyIdentifierExtension.create(caCert, false),
  ];
  if (req.hosts && req.hosts.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        req.hosts.map((h) => (isIP(h) ? { type: 'ip' as const, value: h } : { type: 'dns' as const, value: h })),
        false,
      ),
    );
  }
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject,
    issuer: caCert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (req.validDays ?? 365) * DAY),
    publicKey: publicKey as never,
    signingKey: caKey as never,
    signingAlgorithm: SIGN_ALG,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** sha256 of the certificate's DER, as kubeadm's discovery-token-ca-cert-hash ("sha256:<hex>"). */
export function certificateHash(certPem: string): string {
  return `sha256:${createHash('sha256').update(new NodeX509(certPem).raw).digest('hex')}`;
}

/** The SANs (DNS names and IPs) a PEM certificate carries, and when it expires. */
export function describeCertificate(certPem: string): { hosts: string[]; notAfter: number; subject: string } {
  const cert = new NodeX509(certPem);
  const hosts = (cert.subjectAltName ?? '')
    .split(/,\s*/)
    .filter(Boolean)
    .map((entry) => entry.replace(/^(DNS|IP Address):/, ''));
  return { hosts, notAfter: Date.parse(cert.validTo), subject: cert.subject };
}

/** What a signer puts in a certificate for a CertificateSigningRequest (upstream's PermissiveSigningPolicy). */
export interface SigningPolicy {
  /** spec.usages, upstream's names ("digital signature", "client auth"). */
  usages: readonly string[];
  /** How long the certificate is valid. */
  ttlMs: number;
  /** ms since epoch. */
  now: number;
}

const KEY_USAGE_FLAGS: Record<string, number> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

const EXT_KEY_USAGES: Record<string, string> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Backdating covers clocks a little behind the signer's; a short certificate keeps its whole life. */
const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3_600_000;

/**
 * Issues a certificate for a PKCS#10 request as kube-controller-manager's signers do: the
 * request's own subject and subjectAltNames, the usages asked for, not a CA, valid from five
 * minutes ago for `ttlMs` (less the backdating unless short), never past the CA's own end.
 */
export async function signForRequest(ca: CertificateAuthority, csrPem: string, policy: SigningPolicy): Promise<string> {
  const csr = new x509.Pkcs10CertificateRequest(csrPem);
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await crypto.subtle.importKey('pkcs8', fromPem(ca.keyPem), KEY_ALG, false, ['sign']);
  let flags = 0;
  const extUsages: string[] = [];
  for (const u of policy.usages) {
    if (KEY_USAGE_FLAGS[u] !== undefined) flags |= KEY_USAGE_FLAGS[u]!;
    else if (EXT_KEY_USAGES[u] !== undefined) extUsages.push(EXT_KEY_USAGES[u]!);
    else throw new Error(`unrecognized usage: ${u}`);
  }
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (flags !== 0) extensions.push(new x509.KeyUsagesExtension(flags, true));
  if (extUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extUsages, false));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(caCert, false));
  const san = csr.extensions.find((e) => e.type === '2.5.29.17');
  if (san) extensions.push(new x509.Extension(san.type, false, san.value));
  const notAfter = Math.min(policy.now + policy.ttlMs - (policy.ttlMs < SHORT_MS ? 0 : BACKDATE_MS), caCert.notAfter.getTime());
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: csr.subjectName,
    issuer: caCert.subjectName,
    notBefore: new Date(policy.now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    publicKey: csr.publicKey,
    signingKey: caKey as never,
    signingAlgorithm: SIGN_ALG,
    extensions,
  });
  return cert.toString('pem') + '\n';
}
