// Names of resources as requests, limits and quotas spell them (upstream's core/v1 helper rules).
import { isQualifiedName } from './validation.js';

export function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}

/** In the kubernetes.io namespace: unprefixed names are implicitly. */
export function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** A vendor's countable resource (example.com/gpu): never overcommitted, quota'd as requests.<name>. */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

/** The compute resources a quota names, bare (a request) or as requests.* and limits.*. */
export const COMPUTE_QUOTA_RESOURCES: readonly string[] = [
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
];

/**
 * The cpu and memory names among them (upstream's podComputeQuotaResources): a quota on one makes
 * every container name it, and only they (and `pods`) take the pod scopes.
 */
export const CPU_MEMORY_QUOTA_RESOURCES: readonly string[] = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

/** Hugepages as a quota names them, bare or as requests.*. */
export function isQuotaHugePages(name: string): boolean {
  return name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');
}
