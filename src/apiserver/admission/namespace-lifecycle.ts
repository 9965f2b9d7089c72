// NamespaceLifecycle: nothing is created in a namespace that does not exist or is being deleted
// (upstream's messages), so a namespace's deletion can finish. It runs first, as upstream's does.
import { forbiddenObject, notFound } from '../../api/errors.js';
import type { AdmissionPlugin } from './plugin.js';

/** Namespace existence and lifecycle, answered from the watch cache where it can be. */
export interface NamespaceLookup {
  phaseOf(namespace: string): Promise<'Active' | 'Terminating' | undefined>;
}

export function namespaceLifecycle(namespaces: NamespaceLookup): AdmissionPlugin {
  return {
    name: 'NamespaceLifecycle',
    handles: (op, rt) => op === 'CREATE' && rt.namespaced,
    mutate: async (a) => {
      const ns = a.namespace;
      if (!ns) return;
      const phase = await namespaces.phaseOf(ns);
      if (!phase) throw notFound('namespaces', '', ns);
      if (phase === 'Terminating') {
        throw forbiddenObject(a.resource.resource, a.resource.group, a.name, `unable to create new content in namespace ${ns} because it is being terminated`);
      }
    },
  };
}
