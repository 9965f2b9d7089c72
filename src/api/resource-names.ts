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
