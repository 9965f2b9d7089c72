// The finalizers that keep a claim in use by a pod, and a bound volume, from going away under it
// (the StorageObjectInUseProtection admission plugin adds them; the volume binding controller
// removes them once nothing uses the object).
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';
