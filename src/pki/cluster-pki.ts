// The certificates a server keeps in <data-dir>/tls, created on first start and reused after.
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import { join } from 'node:path';
import {
  createCertificateAuthority,
  createSigningKey,
  describeCertificate,
  issueCertificate,
  type CertificateAuthority,
  type IssuedCertificate,
} from './certificates.js';

export interface ClusterPki {
  ca: CertificateAuthority;
  server: IssuedCertificate;
  admin: IssuedCertificate;
  /** What the API server presents to agents when it fetches logs. */
  kubeletClient: IssuedCertificate;
  /** The private key (PKCS#8 PEM) that signs service-account tokens. */
  serviceAccountKeyPem: string;
  /**
   * The front-proxy (requestheader) CA, apart from the cluster CA as upstream keeps it: extension
   * API servers trust X-Remote-User headers only on connections with a certificate it signed.
   */
  frontProxyCa: CertificateAuthority;
  /** What the aggregation layer presents to extension API servers (CN front-proxy-client). */
  frontProxyClient: IssuedCertificate;
}

/** The CN of the aggregation layer's client certificate, the one name requestheader-allowed-names lists. */
export const FRONT_PROXY_CLIENT_NAME = 'front-proxy-client';

/** What members of one cluster share when their datastore is (etcd). */
export interface SharedPki {
  ca: CertificateAuthority;
  serviceAccountKeyPem: string;
  frontProxyCa?: CertificateAuthority;
}


function readPair(dir: string, name: string): IssuedCertificate | undefined {
  const crt = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  if (!existsSync(crt) || !existsSync(key)) return undefined;
  return { certPem: readFileSync(crt, 'utf8'), keyPem: readFileSync(key, 'utf8') };
}

function writePair(dir: string, name: string, pair: IssuedCertificate): void {
  writeFileAtomic(join(dir, `${name}.key`), pair.keyPem);
  writeFileAtomic(join(dir, `${name}.crt`), pair.certPem, 0o644);
}

const RENEW_BEFORE_MS = 30 * 86_400_000;

function stillGood(pair: IssuedCertificate | undefined, hosts: string[]): pair is IssuedCertificate {
  if (!pair) return false;
  const info = describeCertificate(pair.certPem);
  return info.notAfter - Date.now() > RENEW_BEFORE_MS && hosts.every((h) => info.hosts.includes(h));
}

/**
 * Loads or creates the cluster CA (unless one is given, e.g. from the shared datastore), a serving
 * certificate valid for `hosts`, and the admin client certificate (system:masters).
 */
export async function ensureClusterPki(dataDir: string, hosts: string[], shared?: SharedPki): Promise<ClusterPki> {
  const sharedCa = shared?.ca;
  const dir = join(dataDir, 'tls');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  let ca = sharedCa ?? (readPair(dir, 'ca') as CertificateAuthority | undefined);
  let caChanged = false;
  if (!ca) {
    ca = await createCertificateAuthority(`skiff-ca@${Math.floor(Date.now() / 1000)}`);
    caChanged = true;
  } else if (sharedCa) {
    const onDisk = readPair(dir, 'ca');
    caChanged = onDisk?.certPem !== sharedCa.certPem;
  }
  if (caChanged) writePair(dir, 'ca', ca);

  let server = readPair(dir, 'server');
  if (caChanged || !stillGood(server, hosts)) {
    // A new name (a control-plane endpoint added or moved) goes next to the old ones, so clients
    // still on an old address keep verifying the server while they move.
    const previous = server && !caChanged ? describeCertificate(server.certPem).hosts : [];
    server = await issueCertificate(ca, { commonName: 'skiff-apiserver', hosts: [...new Set([...hosts, ...previous])], usage: 'server' });
    writePair(dir, 'server', server);
  }
  let admin = readPair(dir, 'admin');
  if (caChanged || !stillGood(admin, [])) {
    admin = await issueCertificate(ca, { commonName: 'skiff-admin', organizations: ['system:masters'], usage: 'client' });
    writePair(dir, 'admin', admin);
  }
  let kubeletClient = readPair(dir, 'kubelet-client');
  if (caChanged || !stillGood(kubeletClient, [])) {
    kubeletClient = await issueCertificate(ca, { commonName: 'skiff-apiserver-kubelet-client', organizations: ['system:masters'], usage: 'client' });
    writePair(dir, 'kubelet-client', kubeletClient);
  }
  const saKeyPath = join(dir, 'service-account.key');
  let serviceAccountKeyPem = shared?.serviceAccountKeyPem ?? (existsSync(saKeyPath) ? readFileSync(saKeyPath, 'utf8') : undefined);
  if (!serviceAccountKeyPem) serviceAccountKeyPem = await createSigningKey();
  if (!existsSync(saKeyPath) || readFileSync(saKeyPath, 'utf8') !== serviceAccountKeyPem) writeFileAtomic(saKeyPath, serviceAccountKeyPem);
  let frontProxyCa = shared?.frontProxyCa ?? (readPair(dir, 'front-proxy-ca') as CertificateAuthority | undefined);
  const frontProxyCaChanged = !frontProxyCa || readPair(dir, 'front-proxy-ca')?.certPem !== frontProxyCa.certPem;
  frontProxyCa ??= await createCertificateAuthority(`front-proxy-ca@${Math.floor(Date.now() / 1000)}`);
  if (frontProxyCaChanged) writePair(dir, 'front-proxy-ca', frontProxyCa);
  let frontProxyClient = readPair(dir, 'front-proxy-client');
  if (frontProxyCaChanged || !stillGood(frontProxyClient, [])) {
    frontProxyClient = await issueCertificate(frontProxyCa, { commonName: FRONT_PROXY_CLIENT_NAME, usage: 'client' });
    writePair(dir, 'front-proxy-client', frontProxyClient);
  }
  return { ca, server, admin, kubeletClient, serviceAccountKeyPem, frontProxyCa, frontProxyClient };
}
