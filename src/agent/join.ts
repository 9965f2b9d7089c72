// Joining a cluster with a bootstrap token: fetch the cluster CA (GET /skiff/v1/ca), check it
// against --ca-file or --ca-cert-hash (sha256 of the CA certificate's DER), then POST a CSR for
// CN=system:node:<name>, O=system:nodes to /skiff/v1/join and keep the issued credential in the
// data dir. Later starts reuse the credential and need no token.
import { userAgent } from '../version.js';
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type { Logger } from '../util/log.js';
import type { AgentStateDir, NodeCredential } from './state-dir.js';
import { CA_PATH, JOIN_PATH } from '../api/join-paths.js';
import { resourcePath } from '../api/paths.js';
import { CERTIFICATES_GROUP, KUBE_APISERVER_CLIENT_KUBELET_SIGNER } from '../api/kinds/certificatesigningrequest.js';
import { certificateCommonName, certificateHash, nodeKeyAndCsr } from './tls.js';

export interface JoinOptions {
  servers: string[];
  token?: string;
  caFile?: string;
  caCertHash?: string;
  insecureSkipCaVerification?: boolean;
  nodeName: string;
  timeoutMs?: number;
  /**
   * Join as a kubelet's TLS bootstrap does: post a CertificateSigningRequest with the token and
   * wait for it to be approved and issued, instead of asking /skiff/v1/join to sign at once.
   */
  tlsBootstrap?: boolean;
}

export class JoinError extends Error {
  /** True when retrying cannot help (refused token, CA mismatch, missing flags). */
  constructor(message: string, readonly fatal = true) {
    super(message);
  }
}

function request(url: string, method: string, opts: { ca?: string; token?: string; body?: string; verify: boolean; timeoutMs: number }): Promise<{ code: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': userAgent('skiff-agent') };
    if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
    if (opts.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(opts.body));
    }
    const req = https.request(url, { method, headers, rejectUnauthorized: opts.verify, ...(opts.ca ? { ca: opts.ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.setTimeout(opts.timeoutMs, () => req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

function message(body: string): string {
  try {
    const j = JSON.parse(body) as { message?: string };
    if (j.message) return j.message;
  } catch {
    /* not JSON */
  }
  return body.slice(0, 300);
}

type TrustOptions = Pick<JoinOptions, 'caFile' | 'caCertHash' | 'insecureSkipCaVerification'>;

/**
 * Which trusted CA `caPem` is not: the one in --ca-file, or the one whose hash --ca-cert-hash
 * gives; undefined when it is that CA, or when neither flag names one. (An unreadable --ca-file throws.)
 */
function untrusted(caPem: string, o: TrustOptions): 'file' | 'hash' | undefined {
  if (o.caFile) return sameCertificate(readFileSync(o.caFile, 'utf8'), caPem) ? undefined : 'file';
  if (o.caCertHash) return certificateHash(caPem).toLowerCase() === o.caCertHash.toLowerCase() ? undefined : 'hash';
  return undefined;
}

/** Checks the fetched CA against what the operator trusts; throws a clear JoinError otherwise. */
export function verifyCa(caPem: string, o: TrustOptions): void {
  const why = untrusted(caPem, o);
  if (why === 'file') throw new JoinError(`the cluster CA served by the API server does not match ${o.caFile}; refusing to join`);
  if (why === 'hash') throw new JoinError(`the cluster CA's hash is ${certificateHash(caPem)}, not the expected ${o.caCertHash}; refusing to join`);
  if (!o.caFile && !o.caCertHash && !o.insecureSkipCaVerification) {
    throw new JoinError('cannot verify the cluster CA: pass --ca-file PATH or --ca-cert-hash sha256:HEX (or, unsafely, --insecure-skip-ca-verification)');
  }
}

/** GET /skiff/v1/ca from `server`, unverified: what it presents is compared with what is trusted, never trusted itself. */
async function fetchCa(server: string, timeoutMs: number): Promise<string> {
  const r = await request(new URL(CA_PATH, server).href, 'GET', { verify: false, timeoutMs });
  if (r.code !== 200) throw new JoinError(`GET ${CA_PATH} answered ${r.code}: ${message(r.body)}`);
  return (JSON.parse(r.body) as { caPem?: string }).caPem ?? '';
}

/**
 * Without a CA to trust, what the servers present is only a hint: say once, clearly, that it is
 * another cluster's (every request will then fail verification). It runs beside the start, which
 * it never holds up (a server that does not answer takes its whole timeout).
 */
async function warnIfServedCaDiffers(cred: NodeCredential, o: JoinOptions, log: Logger): Promise<void> {
  for (const server of o.servers) {
    let served: string;
    try {
      served = await fetchCa(server, Math.min(o.timeoutMs ?? 10_000, 3000));
    } catch {
      continue;
    }
    if (!sameCertificate(served, cred.caPem)) {
      log.error({ node: o.nodeName, server }, "the API server presents another cluster's CA than the one that issued this node's credential; to join that cluster, pass --token with --ca-file or --ca-cert-hash of its CA");
    }
    return;
  }
}

function sameCertificate(a: string, b: string): boolean {
  try {
    return new X509Certificate(a).raw.equals(new X509Certificate(b).raw);
  } catch {
    return false;
  }
}

/**
 * Why a stored credential belongs to another cluster (a data dir reused after the cluster was
 * made anew: another CA), judged only against what the operator trusts (--ca-file or
 * --ca-cert-hash); undefined when it belongs to this one or nothing trusted can say.
 */
function otherClusterCredential(cred: NodeCredential, o: JoinOptions): string | undefined {
  let why: 'file' | 'hash' | undefined;
  try {
    why = untrusted(cred.caPem, o);
  } catch {
    return undefined;
  }
  if (why === 'file') return `the node credential in the data dir was issued by another cluster's CA than ${o.caFile}'s (the cluster was made anew?)`;
  if (why === 'hash') return `the node credential in the data dir was issued by a CA whose hash is not ${o.caCertHash} (the cluster was made anew?)`;
  return undefined;
}

const CSR_COLLECTION = resourcePath(CERTIFICATES_GROUP, 'certificatesigningrequests');
/** How long a posted request may wait for its approval and certificate, as the kubelet's bootstrap does. */
const APPROVAL_WAIT_MS = 15 * 60_000;

interface CsrAnswer {
  metadata?: { name?: string };
  status?: { certificate?: string; conditions?: { type?: string; reason?: string; message?: string }[] };
}

/**
 * A kubelet's TLS bootstrap: with the bootstrap token, post a CertificateSigningRequest for
 * system:node:<name> to the kube-apiserver-client-kubelet signer, then wait until it carries a
 * certificate (a Denied or Failed condition ends the join).
 */
async function certificateThroughCsr(server: string, caPem: string, o: JoinOptions, csrPem: string, log: Logger): Promise<string> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  const send = (method: string, path: string, body?: unknown) =>
    request(new URL(path, server).href, method, { ca: caPem, verify: true, token: o.token!, timeoutMs, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const created = await send('POST', CSR_COLLECTION, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: 'csr-' },
    // An ECDSA key: no key encipherment, as the kubelet asks for its own.
    spec: { request: Buffer.from(csrPem, 'latin1').toString('base64'), signerName: KUBE_APISERVER_CLIENT_KUBELET_SIGNER, usages: ['digital signature', 'client auth'] },
  });
  if (created.code === 401 || created.code === 403) throw new JoinError(`the join token was refused by ${server}: ${message(created.body)}`);
  if (created.code !== 201) throw new JoinError(`POST ${CSR_COLLECTION} answered ${created.code}: ${message(created.body)}`);
  const name = (JSON.parse(created.body) as CsrAnswer).metadata?.name ?? '';
  log.info({ server, csr: name, node: o.nodeName }, 'certificate signing request posted; waiting for approval');
  const deadline = Date.now() + APPROVAL_WAIT_MS;
  let unanswered = false;
  for (let wait = 250; ; wait = Math.min(wait * 2, 2000)) {
    // A server that cannot answer for a moment (gone, restarting, 5xx, 429) is asked again: the
    // request it holds is the one to wait for, not a reason to post another.
    const r = await send('GET', `${CSR_COLLECTION}/${encodeURIComponent(name)}`).catch((e: unknown) => ({ code: 0, body: (e as Error).message }));
    if (r.code === 0 || r.code === 429 || r.code >= 500) {
      if (!unanswered) log.warn({ server, csr: name, code: r.code || undefined, err: r.code ? undefined : r.body }, 'cannot read the certificate signing request for now; asking again');
      unanswered = true;
    } else if (r.code !== 200) throw new JoinError(`GET ${CSR_COLLECTION}/${name} answered ${r.code}: ${message(r.body)}`);
    const csr = (r.code === 200 ? JSON.parse(r.body) : {}) as CsrAnswer;
    const ended = csr.status?.conditions?.find((c) => c.type === 'Denied' || c.type === 'Failed');
    if (ended) throw new JoinError(`the certificate signing request ${name} was ${ended.type === 'Denied' ? 'denied' : 'not issued'}: ${ended.reason ?? ''} ${ended.message ?? ''}`.trim());
    if (csr.status?.certificate) return Buffer.from(csr.status.certificate, 'base64').toString('latin1');
    if (Date.now() > deadline) throw new JoinError(`the certificate signing request ${name} was not approved and issued in time; approve it with \`kubectl certificate approve ${name}\``);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** The node credential: from the data dir, or by joining with the bootstrap token. */
export async function ensureNodeCredential(state: AgentStateDir, o: JoinOptions, log: Logger): Promise<NodeCredential> {
  const existing = state.readCredential();
  let replacing = false;
  if (existing && certificateCommonName(existing.certPem) === `system:node:${o.nodeName}`) {
    const other = otherClusterCredential(existing, o);
    if (!other) {
      if (!o.caFile && !o.caCertHash) void warnIfServedCaDiffers(existing, o, log);
      return existing;
    }
    if (!o.token) throw new JoinError(`${other}: pass --token to join this cluster (the stored credential is replaced), or use this cluster's --data-dir`);
    log.warn({ node: o.nodeName }, `${other}; joining this cluster with the token`);
    replacing = true;
  }
  if (!o.token) throw new JoinError(`no node credential in ${state.path('credential')} yet: pass --token to join (or --kubeconfig)`);
  const timeoutMs = o.timeoutMs ?? 10_000;
  let lastError = 'no server to join';
  for (const server of o.servers) {
    try {
      let caPem: string;
      if (o.caFile && !o.caCertHash) {
        caPem = readFileSync(o.caFile, 'utf8');
      } else {
        // The CA is fetched without verification and then checked by hash (as kubeadm's discovery).
        caPem = await fetchCa(server, timeoutMs);
        verifyCa(caPem, o);
      }
      const { keyPem, csrPem } = await nodeKeyAndCsr(o.nodeName);
      if (o.tlsBootstrap) {
        const certPem = await certificateThroughCsr(server, caPem, o, csrPem, log);
        const cred: NodeCredential = { keyPem, certPem, caPem };
        if (replacing) state.forgetCluster();
        state.writeCredential(cred);
        log.info({ server, node: o.nodeName }, 'joined the cluster through a certificate signing request; node credential stored');
        return cred;
      }
      const r = await request(new URL(JOIN_PATH, server).href, 'POST', {
        ca: caPem,
        verify: true,
        token: o.token,
        body: JSON.stringify({ nodeName: o.nodeName, csrPem }),
        timeoutMs,
      });
      if (r.code === 401 || r.code === 403) throw new JoinError(`the join token was refused by ${server}: ${message(r.body)}`);
      if (r.code !== 200 && r.code !== 201) throw new JoinError(`POST /skiff/v1/join answered ${r.code}: ${message(r.body)}`);
      const issued = JSON.parse(r.body) as { certificatePem?: string; caPem?: string };
      if (!issued.certificatePem) throw new JoinError('the join answer has no certificate');
      const cred: NodeCredential = { keyPem, certPem: issued.certificatePem, caPem: issued.caPem ?? caPem };
      // Only now that the new cluster took the node: what it knew of the old one goes.
      if (replacing) state.forgetCluster();
      state.writeCredential(cred);
      log.info({ server, node: o.nodeName }, 'joined the cluster; node credential stored');
      return cred;
    } catch (e) {
      if (e instanceof JoinError && /refus|does not match|hash is|cannot verify|certificate signing request/.test(e.message)) throw e;
      if (e instanceof JoinError && /answered 4\d\d/.test(e.message)) throw e;
      lastError = `${server}: ${(e as Error).message}`;
    }
  }
  throw new JoinError(`could not join: ${lastError}`, false);
}
