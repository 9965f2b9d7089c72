// With a shared datastore (etcd), the first member creates the cluster CA (and the key that signs
// service-account tokens) and stores them there, encrypted with a key derived from the cluster
// token, so every member serves certificates from one CA, one admin kubeconfig works against any
// member, and a token one member issued is valid on all.
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isStoreError, type Store } from '../store/store.js';
import { createCertificateAuthority, createSigningKey, type CertificateAuthority } from './certificates.js';

export const SHARED_CA_KEY = '/skiff/pki/ca';
export const SHARED_SERVICE_ACCOUNT_KEY = '/skiff/pki/service-account';
export const SHARED_FRONT_PROXY_CA_KEY = '/skiff/pki/front-proxy-ca';

interface Sealed {
  v: 1;
  salt: string;
  iv: string;
  tag: string;
  data: string;
}

function key(token: string, salt: Buffer): Buffer {
  return scryptSync(token, salt, 32, { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
}

export function seal(plain: string, token: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key(token, salt), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  const sealed: Sealed = { v: 1, salt: salt.toString('base64'), iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
  return JSON.stringify(sealed);
}

export function unseal(text: string, token: string): string {
  const s = JSON.parse(text) as Sealed;
  const decipher = createDecipheriv('aes-256-gcm', key(token, Buffer.from(s.salt, 'base64')), Buffer.from(s.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(s.tag, 'base64'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(s.data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('the cluster CA in the datastore was sealed with a different --token; every server must use the same token');
  }
}

/** Reads the sealed value at `key`, or creates, seals and stores it when no member has yet. */
async function loadOrCreateSealed<T>(store: Store, token: string, key: string, create: () => Promise<T>, what: string): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await store.get(key);
    if (existing) return JSON.parse(unseal(existing.value, token)) as T;
    const value = await create();
    try {
      await store.create(key, seal(JSON.stringify(value), token));
      return value;
    } catch (e) {
      // Another member started at the same moment and won; use its.
      if (!isStoreError(e, 'exists')) throw e;
    }
  }
  throw new Error(`could not read or create the shared ${what}`);
}

export function loadOrCreateSharedCa(store: Store, token: string): Promise<CertificateAuthority> {
  return loadOrCreateSealed(store, token, SHARED_CA_KEY, () => createCertificateAuthority(`skiff-ca@${Math.floor(Date.now() / 1000)}`), 'cluster CA');
}

/** The private key (PKCS#8 PEM) that signs service-account tokens. */
export async function loadOrCreateSharedServiceAccountKey(store: Store, token: string): Promise<string> {
  const sealed = await loadOrCreateSealed(store, token, SHARED_SERVICE_ACCOUNT_KEY, async () => ({ keyPem: await createSigningKey() }), 'service-account key');
  return sealed.keyPem;
}

/** The front-proxy CA: every member's aggregation layer must be trusted by the same extension servers. */
export function loadOrCreateSharedFrontProxyCa(store: Store, token: string): Promise<CertificateAuthority> {
  return loadOrCreateSealed(store, token, SHARED_FRONT_PROXY_CA_KEY, () => createCertificateAuthority(`front-proxy-ca@${Math.floor(Date.now() / 1000)}`), 'front-proxy CA');
}

/**
 * The values a first member would have stored, made from a single server's own certificates
 * (<data-dir>/tls): a cluster moved from SQLite to etcd keeps its CA, so every credential already
 * handed out (agents', kubeconfigs) still verifies on every member.
 */
export function sealedSharedPki(tlsDir: string, token: string): { key: string; value: string }[] {
  const read = (name: string) => readFileSync(join(tlsDir, name), 'utf8');
  const ca: CertificateAuthority = { certPem: read('ca.crt'), keyPem: read('ca.key') };
  const frontProxyCa: CertificateAuthority = { certPem: read('front-proxy-ca.crt'), keyPem: read('front-proxy-ca.key') };
  return [
    { key: SHARED_CA_KEY, value: seal(JSON.stringify(ca), token) },
    { key: SHARED_SERVICE_ACCOUNT_KEY, value: seal(JSON.stringify({ keyPem: read('service-account.key') }), token) },
    { key: SHARED_FRONT_PROXY_CA_KEY, value: seal(JSON.stringify(frontProxyCa), token) },
  ];
}
