// StorageObjectInUseProtection: every new PersistentVolume and PersistentVolumeClaim carries its
// protection finalizer, so a deletion waits until the volume binding controller sees that no pod
// uses the claim and no claim the volume. Creates only, as upstream: a user may remove the
// finalizer later and the object then goes at once.
import { PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER } from '../../api/kinds/volume-protection.js';
import type { KubeObject } from '../../api/types.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

function addFinalizer(o: KubeObject, finalizer: string): void {
  const list = o.metadata.finalizers ?? [];
  if (!list.includes(finalizer)) o.metadata.finalizers = [...list, finalizer];
}

export function storageObjectInUseProtection(): AdmissionPlugin {
  return {
    name: 'StorageObjectInUseProtection',
    handles: (op, rt) => op === 'CREATE' && (isCore(rt, 'persistentvolumes') || isCore(rt, 'persistentvolumeclaims')),
    mutate: (a) => {
      if (a.subresource !== '' || !a.object) return;
      addFinalizer(a.object, isCore(a.resource, 'persistentvolumes') ? PV_PROTECTION_FINALIZER : PVC_PROTECTION_FINALIZER);
    },
  };
}
