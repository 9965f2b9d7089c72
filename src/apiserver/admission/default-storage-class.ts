// DefaultStorageClass: a claim created without a class (no spec.storageClassName, no beta
// annotation) gets the default StorageClass. An empty class name is a choice ("no class") and is
// kept. With several defaults the newest wins, ties by name, as upstream since 1.26.
import { BETA_STORAGE_CLASS_ANNOTATION } from '../../api/kinds/persistentvolume.js';
import { isDefaultStorageClass } from '../../api/kinds/storageclass.js';
import type { KubeObject } from '../../api/types.js';
import { isCore, type AdmissionPlugin } from './plugin.js';

/** The default class among `classes`, or undefined when none is marked. */
export function defaultClassOf(classes: readonly KubeObject[]): KubeObject | undefined {
  let best: KubeObject | undefined;
  for (const c of classes) {
    if (!isDefaultStorageClass(c)) continue;
    if (!best) {
      best = c;
      continue;
    }
    const a = Date.parse(c.metadata.creationTimestamp ?? '') || 0;
    const b = Date.parse(best.metadata.creationTimestamp ?? '') || 0;
    if (a > b || (a === b && (c.metadata.name ?? '') < (best.metadata.name ?? ''))) best = c;
  }
  return best;
}

export function defaultStorageClassAdmission(classes: () => readonly KubeObject[]): AdmissionPlugin {
  return {
    name: 'DefaultStorageClass',
    handles: (op, rt) => op === 'CREATE' && isCore(rt, 'persistentvolumeclaims'),
    mutate: (a) => {
      const claim = a.object;
      if (a.subresource !== '' || !claim) return;
      const spec = (claim.spec ??= {}) as { storageClassName?: string | null };
      if ((spec.storageClassName !== undefined && spec.storageClassName !== null) || claim.metadata.annotations?.[BETA_STORAGE_CLASS_ANNOTATION] !== undefined) return;
      const def = defaultClassOf(classes());
      if (def?.metadata.name) spec.storageClassName = def.metadata.name;
    },
  };
}
