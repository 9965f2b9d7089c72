// Key material the agent makes itself: the log server's self-signed serving certificate (upstream
// kube-apiserver does not verify kubelet serving certificates by default) and the node's key + CSR
// for joining. The making happens in a short-lived child process (x509-worker.ts), so the ASN.1
// library never stays resident in a long-running agent.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../util/write-file-atomic.js';
import type { X509Request, X509Result } from './x509-worker.js';

function inWorker(req: X509Request): Promise<X509Result> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [fileURLToPath(new URL('./x509-worker.js', import.meta.url)), JSON.stringify(req)], { timeout: 60_000 }, (err, stdout, stderr) => {
      try {
        const m = JSON.parse(stdout) as { ok: boolean; result?: X509Result; error?: string };
        if (m.ok && m.result) return resolve(m.result);
        reject(new Error(m.error ?? 'key generation failed'));
      } catch {
        reject(new Error(`key generation failed: ${err?.message ?? ''} ${stderr}`.trim()));
      }
    });
  });
}

/** Loads or makes <dir>/kubelet.{crt,key}, self-signed for the given hosts, valid a year. */
export async function ensureServingCert(dir: string, nodeName: string, hosts: string[]): Promise<{ certPem: string; keyPem: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const crt = join(dir, 'kubelet.crt');
  const key = join(dir, 'kubelet.key');
  if (existsSync(crt) && existsSync(key)) {
    const certPem = readFileSync(crt, 'utf8');
    try {
      const c = new X509Certificate(certPem);
      const sans = (c.subjectAltName ?? '').split(/,\s*/).map((s) => s.replace(/^(DNS|IP Address):/, ''));
      if (Date.parse(c.validTo) - Date.now() > 30 * 86_400_000 && hosts.every((h) => sans.includes(h))) return { certPem, keyPem: readFileSync(key, 'utf8') };
    } catch {
      /* regenerate */
    }
  }
  const r = await inWorker({ kind: 'serving', nodeName, hosts });
  writeFileAtomic(key, r.keyPem);
  writeFileAtomic(crt, r.certPem!, 0o644);
  return { certPem: r.certPem!, keyPem: r.keyPem };
}

/** A fresh ECDSA P-256 key and a PKCS#10 request for CN=system:node:<name>, O=system:nodes. */
export async function nodeKeyAndCsr(nodeName: string): Promise<{ keyPem: string; csrPem: string }> {
  const r = await inWorker({ kind: 'csr', nodeName });
  return { keyPem: r.keyPem, csrPem: r.csrPem! };
}

/** sha256:<hex> of a PEM certificate's DER (the --ca-cert-hash form). */
export function certificateHash(pem: string): string {
  return `sha256:${createHash('sha256').update(new X509Certificate(pem).raw).digest('hex')}`;
}

/** The subject CN of a PEM certificate. */
export function certificateCommonName(pem: string): string | undefined {
  try {
    const m = /CN=([^\n,]+)/.exec(new X509Certificate(pem).subject);
    return m?.[1];
  } catch {
    return undefined;
  }
}
