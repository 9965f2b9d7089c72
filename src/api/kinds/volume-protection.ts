// The finalizers that keep a claim in use by a pod, and a bound volume, from going away under it
// (upstream's StorageObjectInUseProtection admission adds them; the volume binding controller
// removes them once nothing uses the object).
import type { KubeObject } from '../types.js';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

export function addFinalizer(o: KubeObject, finalizer: string): void {
  const list = Array.isArray(o.metadata.finalizers) ? o.metadata.finalizers : [];
  if (!list.includes(finalizer)) o.metadata.finalizers = [...list, finalizer];
}
