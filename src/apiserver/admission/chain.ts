// The API server's admission plugins, in upstream's order (kube-apiserver's AllOrderedPlugins):
// a plugin added later takes its upstream place in ADMISSION_ORDER and one entry in the server's
// wiring, nothing else.
import { AdmissionChain, type AdmissionPlugin } from './plugin.js';

/**
 * Upstream's order, with the plugins skiff has. Service address allocation and RBAC's escalation
 * check live in upstream's storage for those kinds, which runs after admission's mutating stage:
 * they come last.
 */
export const ADMISSION_ORDER = [
  'NamespaceLifecycle',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'PodSecurity',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'ServiceAddresses',
  'RBACEscalation',
] as const;

/** The chain of `plugins`, sorted into upstream's order; a plugin without a place there is a bug. */
export function orderedChain(plugins: readonly AdmissionPlugin[]): AdmissionChain {
  const rank = (p: AdmissionPlugin): number => {
    const i = (ADMISSION_ORDER as readonly string[]).indexOf(p.name);
    if (i < 0) throw new Error(`admission plugin ${p.name} has no place in ADMISSION_ORDER`);
    return i;
  };
  const ranked = plugins.map((p) => ({ p, rank: rank(p) }));
  return new AdmissionChain(ranked.sort((a, b) => a.rank - b.rank).map((r) => r.p));
}
