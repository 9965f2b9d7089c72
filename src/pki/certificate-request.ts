// PKCS#10 certificate requests read synchronously with node:crypto alone: validation of a
// CertificateSigningRequest runs inside the API server's synchronous validate step, and the
// signers' checks read the subject and subjectAltNames. Only what Go's x509.ParseCertificateRequest
// exposes that Kubernetes looks at is read: subject CN and O, the DNS/IP/email/URI SANs, the key.
import { X509Certificate, createPublicKey, verify, type KeyObject } from 'node:crypto';

export interface ParsedCertificateRequest {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ipAddresses: string[];
  emailAddresses: string[];
  uris: string[];
  /** The requester's public key (SubjectPublicKeyInfo, DER). */
  publicKeyDer: Buffer;
  publicKey: KeyObject;
  /** Whether the request is signed by the key it carries. */
  signatureValid: boolean;
}

interface Tlv {
  tag: number;
  /** The whole element, header included. */
  raw: Buffer;
  content: Buffer;
}

class Asn1Error extends Error {}

function readTlv(buf: Buffer, at: number): Tlv & { end: number } {
  if (at + 2 > buf.length) throw new Asn1Error('asn1: syntax error: data truncated');
  const tag = buf[at]!;
  let len = buf[at + 1]!;
  let header = 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4 || at + 2 + n > buf.length) throw new Asn1Error('asn1: structure error: length too large');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[at + 2 + i]!;
    header += n;
  }
  const end = at + header + len;
  if (end > buf.length) throw new Asn1Error('asn1: syntax error: data truncated');
  return { tag, raw: buf.subarray(at, end), content: buf.subarray(at + header, end), end };
}

function children(content: Buffer): Tlv[] {
  const out: Tlv[] = [];
  for (let at = 0; at < content.length; ) {
    const t = readTlv(content, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

function expect(t: Tlv | undefined, tag: number): Tlv {
  if (!t || t.tag !== tag) throw new Asn1Error('asn1: structure error: tags don\'t match');
  return t;
}

function oid(content: Buffer): string {
  const parts: number[] = [Math.floor(content[0]! / 40), content[0]! % 40];
  let v = 0;
  for (let i = 1; i < content.length; i++) {
    v = v * 128 + (content[i]! & 0x7f);
    if (!(content[i]! & 0x80)) {
      parts.push(v);
      v = 0;
    }
  }
  return parts.join('.');
}

const OID_CN = '2.5.4.3';
const OID_O = '2.5.4.10';
const OID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';
const OID_SAN = '2.5.29.17';

/** Signature algorithms by OID: the hash node:crypto verifies with (null: the key decides, Ed25519). */
const SIGNATURE_HASHES: Record<string, string | null> = {
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
  '1.2.840.113549.1.1.5': 'sha1',
  '1.3.101.112': null,
};

function ipText(b: Buffer): string {
  if (b.length === 4) return [...b].join('.');
  const groups: string[] = [];
  for (let i = 0; i < b.length; i += 2) groups.push(b.readUInt16BE(i).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

function readSans(extensions: Tlv, out: ParsedCertificateRequest): void {
  for (const ext of children(expect(extensions, 0x30).content)) {
    const parts = children(ext.content);
    if (oid(expect(parts[0], 0x06).content) !== OID_SAN) continue;
    const value = parts[parts.length - 1]!;
    for (const name of children(expect(readTlv(value.content, 0), 0x30).content)) {
      const text = name.content.toString('latin1');
      switch (name.tag) {
        case 0x81:
          out.emailAddresses.push(text);
          break;
        case 0x82:
          out.dnsNames.push(text);
          break;
        case 0x86:
          out.uris.push(text);
          break;
        case 0x87:
          out.ipAddresses.push(ipText(name.content));
          break;
      }
    }
  }
}

/** The DER inside the first PEM block of `label`, or undefined. */
export function firstPemBlock(pem: string, label: string): Buffer | undefined {
  const m = new RegExp(`-----BEGIN ${label}-----\\r?\\n([\\s\\S]*?)-----END ${label}-----`).exec(pem);
  return m ? Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64') : undefined;
}

/**
 * Parses a PEM "CERTIFICATE REQUEST". Throws with Go's words where Kubernetes users see them
 * ("PEM block type must be CERTIFICATE REQUEST"); a malformed body says what asn1 would.
 */
export function parseCertificateRequest(pem: string): ParsedCertificateRequest {
  const begin = /-----BEGIN ([^-\r\n]+)-----/.exec(pem);
  if (!begin || begin[1] !== 'CERTIFICATE REQUEST') throw new Error('PEM block type must be CERTIFICATE REQUEST');
  const der = firstPemBlock(pem, 'CERTIFICATE REQUEST');
  if (!der || der.length === 0) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  try {
    const top = readTlv(der, 0);
    const [info, algorithm, signature] = children(expect(top, 0x30).content);
    const infoParts = children(expect(info, 0x30).content);
    const subject = expect(infoParts[1], 0x30);
    const spki = expect(infoParts[2], 0x30);
    const out: ParsedCertificateRequest = {
      commonName: '',
      organizations: [],
      dnsNames: [],
      ipAddresses: [],
      emailAddresses: [],
      uris: [],
      publicKeyDer: Buffer.from(spki.raw),
      publicKey: createPublicKey({ key: Buffer.from(spki.raw), format: 'der', type: 'spki' }),
      signatureValid: false,
    };
    for (const rdn of children(subject.content)) {
      for (const atv of children(expect(rdn, 0x31).content)) {
        const [type, value] = children(expect(atv, 0x30).content);
        const id = oid(expect(type, 0x06).content);
        const text = value!.content.toString('utf8');
        if (id === OID_CN) out.commonName = text;
        else if (id === OID_O) out.organizations.push(text);
      }
    }
    const attributes = infoParts[3];
    if (attributes && attributes.tag === 0xa0) {
      for (const attr of children(attributes.content)) {
        const [type, values] = children(expect(attr, 0x30).content);
        if (oid(expect(type, 0x06).content) !== OID_EXTENSION_REQUEST) continue;
        const first = children(expect(values, 0x31).content)[0];
        if (first) readSans(first, out);
      }
    }
    const algOid = oid(expect(children(expect(algorithm, 0x30).content)[0], 0x06).content);
    const sig = expect(signature, 0x03).content.subarray(1);
    const hash = SIGNATURE_HASHES[algOid];
    if (hash === undefined) throw new Error(`x509: cannot verify signature: algorithm unimplemented`);
    out.signatureValid = verify(hash, info!.raw, { key: out.publicKey, dsaEncoding: 'der' }, sig);
    return out;
  } catch (e) {
    if (e instanceof Asn1Error) throw new Error(e.message);
    if (e instanceof Error && e.message.startsWith('x509:')) throw e;
    throw new Error(`x509: malformed certificate request: ${(e as Error).message}`);
  }
}

/** Go's CheckSignature error for the request's key type. */
export function signatureFailure(req: ParsedCertificateRequest): string {
  switch (req.publicKey.asymmetricKeyType) {
    case 'ec':
      return 'x509: ECDSA verification failure';
    case 'ed25519':
      return 'x509: Ed25519 verification failure';
    default:
      return 'crypto/rsa: verification error';
  }
}

/**
 * Why `pem` is not what status.certificate may hold (one or more CERTIFICATE blocks, no headers,
 * each a certificate), in upstream's words; undefined when it is fine or empty.
 */
export function certificateBlocksError(pem: string): string | undefined {
  if (pem.length === 0) return undefined;
  const blocks = [...pem.matchAll(/-----BEGIN ([^-\r\n]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return 'must contain at least one CERTIFICATE PEM block';
  for (const [, label, body] of blocks) {
    if (label !== 'CERTIFICATE') return `only CERTIFICATE PEM blocks are allowed, found ${JSON.stringify(label)}`;
    if (/^[\w-]+:/m.test(body!)) return 'no PEM block headers are permitted';
    try {
      new X509Certificate(Buffer.from(body!.replace(/\s+/g, ''), 'base64'));
    } catch {
      return 'x509: malformed certificate';
    }
  }
  return undefined;
}
