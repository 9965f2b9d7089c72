// The resource types CustomResourceDefinitions add, as controllers see them: read from an informer
// on the CRDs, so a controller in any process (not only beside an API server) knows which custom
// kinds exist. The garbage collector watches them; the namespace controller empties them.
import type { ResourceType } from '../api/resource.js';
import { asCRD, crdCondition } from '../apiextensions/customresourcedefinition.js';
import { customResourceTypes } from '../apiextensions/custom-resource.js';
import type { Informer } from '../client/informer.js';
import { PATHS, type SharedInformers } from './informers.js';

export class CustomResourceTypes {
  private readonly informer: Informer;
  private current = new Map<string, ResourceType>();
  private readonly listeners = new Set<() => void>();

  constructor(informers: SharedInformers) {
    this.informer = informers.for(PATHS.customresourcedefinitions, { readOnly: true });
    const changed = (): void => this.refresh();
    this.informer.addHandlers({ add: changed, update: changed, delete: changed });
  }

  waitForSync(): Promise<void> {
    return this.informer.waitForSync();
  }

  /** The served custom types now: one per served version of every established CRD. */
  types(): ResourceType[] {
    return [...this.current.values()];
  }

  forKind(group: string, version: string, kind: string): ResourceType | undefined {
    for (const rt of this.current.values()) if (rt.group === group && rt.version === version && rt.kind === kind) return rt;
    return undefined;
  }

  /** Calls `listener` whenever the set of served custom types changes. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private refresh(): void {
    const next = new Map<string, ResourceType>();
    for (const o of this.informer.list()) {
      const crd = asCRD(o);
      if (crdCondition(crd, 'Established')?.status !== 'True') continue;
      for (const rt of customResourceTypes(crd)) next.set(`${rt.group}/${rt.version}/${rt.resource}`, rt);
    }
    const same = next.size === this.current.size && [...next].every(([k, rt]) => this.current.get(k)?.namespaced === rt.namespaced);
    this.current = next;
    if (!same) for (const l of this.listeners) l();
  }
}
