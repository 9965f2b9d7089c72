// What kube-controller-manager's built-in signers accept (upstream's ValidateKubeletClientCSR,
// ValidateKubeletServingCSR and the kube-apiserver-client usage rule), with upstream's messages:
// a request a signer will not honour gets a Failed condition with the reason, never a certificate.
import type { ParsedCertificateRequest } from '../pki/certificate-request.js';
import { KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, KUBELET_SERVING_SIGNER } from './kinds/certificatesigningrequest.js';

function sameSet(a: ReadonlySet<string>, b: readonly string[]): boolean {
  const s = new Set(b);
  return s.size === a.size && [...a].every((x) => s.has(x));
}

const KUBELET_CLIENT_USAGES = new Set(['digital signature', 'key encipherment', 'client auth']);
const KUBELET_CLIENT_USAGES_NO_RSA = new Set(['digital signature', 'client auth']);
const KUBELET_SERVING_USAGES = new Set(['digital signature', 'key encipherment', 'server auth']);
const KUBELET_SERVING_USAGES_NO_RSA = new Set(['digital signature', 'server auth']);

function isNodesOnly(req: ParsedCertificateRequest): boolean {
  return req.organizations.length === 1 && req.organizations[0] === 'system:nodes';
}

/** Why a request is not a kubelet's client certificate request; undefined when it is. */
export function kubeletClientProblem(req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  if (!isNodesOnly(req)) return 'subject organization is not system:nodes';
  if (req.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(KUBELET_CLIENT_USAGES, usages) && !sameSet(KUBELET_CLIENT_USAGES_NO_RSA, usages)) return `usages did not match [${[...KUBELET_CLIENT_USAGES].sort().join(' ')}]`;
  return undefined;
}

/** Why a request is not a kubelet's serving certificate request; undefined when it is. */
export function kubeletServingProblem(req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  if (!isNodesOnly(req)) return 'subject organization is not system:nodes';
  if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(KUBELET_SERVING_USAGES, usages) && !sameSet(KUBELET_SERVING_USAGES_NO_RSA, usages)) return `usages did not match [${[...KUBELET_SERVING_USAGES].sort().join(' ')}]`;
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** kube-apiserver-client: client auth required, digital signature and key encipherment allowed, nothing else. */
export function apiServerClientProblem(usages: readonly string[]): string | undefined {
  for (const u of usages) if (u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth') return `invalid usage for client certificate: ${u}`;
  return usages.includes('client auth') ? undefined : 'missing required usage for client certificate: client auth';
}

/** The signers kube-controller-manager issues for, and what each refuses. */
export const BUILT_IN_SIGNERS: ReadonlyMap<string, (req: ParsedCertificateRequest, usages: readonly string[]) => string | undefined> = new Map([
  [KUBE_APISERVER_CLIENT_SIGNER, (_req: ParsedCertificateRequest, usages: readonly string[]) => apiServerClientProblem(usages)],
  [KUBE_APISERVER_CLIENT_KUBELET_SIGNER, kubeletClientProblem],
  [KUBELET_SERVING_SIGNER, kubeletServingProblem],
]);
